"""τ²-bench's words for the Telecom tools, shown to callers in ``compat: tau2`` mode.

The tools here say things in their own words; an imported τ² task shows the caller what
τ²-bench's telecom environment says for the same call (:func:`hasbench.envs.tau2.said`):
a phone action answers with a sentence and then the status bar as τ²'s phone draws it
(icons, signal, technology, data, Wi-Fi, VPN, battery); the carrier answers with τ²'s
messages, and a refuel as a plain mapping (whose numbers τ² shows as texts).
"""

from __future__ import annotations

from typing import Any

SIGNAL = {
    "none": "📵 No Signal", "poor": "📶¹ Poor", "fair": "📶² Fair", "good": "📶³ Good",
    "excellent": "📶⁴ Excellent",
}  # fmt: skip
"""How τ²'s status bar shows each signal strength."""


def status_bar(phone: dict[str, Any]) -> str:
    """The phone's status bar as τ²'s phone draws it."""
    shown = []
    if phone["airplane_mode"]:
        shown.append("✈️ Airplane Mode")
    else:
        shown.append(SIGNAL.get(phone["network_signal_strength"], SIGNAL["none"]))
        tech = phone["network_technology_connected"]
        if tech != "none":
            shown.append(tech)
        if phone["data_enabled"] and tech != "none":
            shown.append("📱 Data Enabled")
            if phone["data_saver_mode"]:
                shown.append("🔽 Data Saver")
        else:
            shown.append("📵 Data Disabled")
    if phone["wifi_enabled"] and phone["wifi_connected"]:
        ssid = phone["wifi_ssid"]
        shown.append(f"📡 Connected to {ssid}" if ssid else "📡 Enabled")
    if phone["vpn_connected"]:
        shown.append("🔒 VPN Connected")
    shown.append(f"🔋 {phone['battery_level']}%")
    return " | ".join(shown)


def with_bar(text: str, phone: dict[str, Any]) -> str:
    """A phone action's sentence followed by the status bar, as τ²'s phone answers."""
    return f"{text}\nStatus Bar: {status_bar(phone)}"


def switched(name: str, on: bool, phone: dict[str, Any]) -> str:
    """τ²'s answer to a toggle: ``Mobile Data is now ON.`` and the status bar."""
    return with_bar(f"{name} is now {'ON' if on else 'OFF'}.", phone)


def app_permissions(app_name: str, granted: list[str] | None) -> str:
    """τ²'s answer to a permission check (None: no such app)."""
    if granted is None:
        return f"App '{app_name}' not found on this phone."
    if not granted:
        return f"App '{app_name}' currently has no permissions granted."
    return f"App '{app_name}' has permission for: {', '.join(granted)}."


SIM = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
"""τ²'s answer to a SIM check, by the SIM's status."""
SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
"""What τ²'s speed test adds to a measured speed, by its label."""


def network_status(phone: dict[str, Any], sim: str) -> str:
    """τ²'s network status lines."""

    def on(flag: bool) -> str:
        return "ON" if flag else "OFF"

    def yes(flag: bool) -> str:
        return "Yes" if flag else "No"

    lines = [
        f"Airplane Mode: {on(phone['airplane_mode'])}",
        f"SIM Card Status: {sim}",
        f"Cellular Connection: {phone['network_connection_status']}",
        f"Cellular Signal: {phone['network_signal_strength']}",
        f"Cellular Network Type: {phone['network_technology_connected']}",
        f"Mobile Data Enabled: {yes(phone['data_enabled'])}",
        f"Data Roaming Enabled: {yes(phone['roaming_enabled'])}",
        f"Wi-Fi Radio: {on(phone['wifi_enabled'])}",
        f"Wi-Fi Connected: {yes(phone['wifi_connected'])}",
    ]
    if phone["wifi_connected"]:
        lines.append(f"Connected Wi-Fi Network: {phone['wifi_ssid']}")
    return "\n".join(lines)


def speed_test(mbps: float | None, label: str) -> str:
    """τ²'s speed test result."""
    if mbps is None:
        return f"Speed test failed: {label or 'Could not determine speed'}."
    return f"Speed Test Result: {mbps:.2f} Mbps ({label}). {SPEED_ADVICE.get(label, '')}"


def wifi_status(phone: dict[str, Any]) -> str:
    """τ²'s answer to a Wi-Fi check."""
    if not phone["wifi_enabled"]:
        return "Wi-Fi is turned OFF."
    if phone["wifi_connected"]:
        return (f"Wi-Fi is ON and connected to '{phone['wifi_ssid']}'. Signal strength: "
                f"{phone['wifi_signal_strength']}.")  # fmt: skip
    return "Wi-Fi is ON but not connected to any network."


def vpn_status(phone: dict[str, Any]) -> str:
    """τ²'s answer to a VPN check.

    The details print as τ² prints them, the performance level as its enum's repr.
    """
    if phone["vpn_connected"]:
        details = phone["vpn_details"]
        if details:
            level = details["server_performance"]
            shown = {**details, "server_performance": _Level(level)}
            return f"VPN is ON and connected. Details: {shown}"
        return "VPN is ON and connected (no specific details available)."
    if phone["vpn_enabled_setting"]:
        return "VPN is turned ON in settings, but currently not connected."
    return "VPN is turned OFF."


def app_status(app_name: str, granted: list[str] | None) -> str:
    """τ²'s answer to an app's status (None: no such app)."""
    if granted is None:
        return f"App '{app_name}' not found on this phone."
    lines = [f"Status for App: {app_name}"]
    if not granted:
        lines.append(" - Permissions: None granted.")
    else:
        lines.append(" - Permissions Granted:")
        lines += [f"   - {permission}" for permission in granted]
    return "\n".join(lines)


class _Level(str):
    """A performance level that prints as τ²'s enum member does."""

    def __repr__(self) -> str:
        return f"<PerformanceLevel.{self.upper()}: {str.__repr__(self)}>"
