"""Telecom's simulated phone: its state and what follows from it.

The user-side database is ``{"device": ..., "surroundings": ...}``: the phone's settings
and the world around it (signal per radio technology, abroad or not, the line's status
and data allowance as synced from the carrier, a payment request). A *network search*
decides service, radio technology and signal from the SIM, airplane mode, APN,
network-mode preference and the line's status; mobile data, speed and picture messages
follow from the result.
"""

from __future__ import annotations

from typing import Any

from hasbench.envs.base import ToolError

NETWORK_MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
PERMISSIONS = ("sms", "storage", "phone", "network")
SPEED_RANGES = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0)}
SIGNAL_FACTOR = {"none": 0.0, "poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0}


def _speed_label(mbps: float) -> str:
    if mbps < 1:
        return "Very Poor"
    if mbps < 5:
        return "Poor"
    if mbps < 25:
        return "Fair"
    if mbps < 100:
        return "Good"
    return "Excellent"


class Phone:
    """The simulated phone in ``self.user_db``: network search, data, speed and MMS.

    Mixed into :class:`~hasbench.envs.telecom.environment.TelecomEnvironment`, whose
    ``user_db`` is copy-on-write: read it through :attr:`_phone` and :attr:`_world`,
    which hand a write its own copies.
    """

    @property
    def _phone(self) -> dict[str, Any]:
        """The phone's settings; while a write runs, the write's own copy (to change them).

        Its containers (APN settings, apps, VPN details) stay shared: a tool changes one
        through ``self.user_writable("device", ...)``.
        """
        if self.writing:
            return self.user_writable("device")
        return self.user_db["device"]

    @property
    def _world(self) -> dict[str, Any]:
        """The surroundings; while a write runs, the write's own copy (as :attr:`_phone`)."""
        if self.writing:
            return self.user_writable("surroundings")
        return self.user_db["surroundings"]

    def _network_search(self) -> None:
        phone, world = self._phone, self.user_db["surroundings"]  # the world: read only
        sim_ok = not phone["sim_card_missing"] and phone["sim_card_status"] == "active"
        status, tech, signal = "no_service", "none", "none"
        if sim_ok:
            mode = phone["network_mode_preference"]
            if mode == "4g_5g_preferred":
                tech = "5G" if world["signal_strength"].get("5G", "none") != "none" else "4G"
            else:
                tech = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}[mode]
            status, signal = "connected", world["signal_strength"].get(tech, "none")
        broken = phone["active_apn_settings"]["apn_name"] == "broken"
        if phone["airplane_mode"] or broken or not world["line_active"]:
            status, tech, signal = "no_service", "none", "none"
        phone["network_connection_status"] = status
        phone["network_technology_connected"] = tech
        phone["network_signal_strength"] = signal

    def _data_working(self) -> bool:
        phone, world = self._phone, self.user_db["surroundings"]  # the world: read only
        if phone["airplane_mode"] or phone["network_signal_strength"] == "none":
            return False
        if phone["network_connection_status"] == "no_service":
            return False
        if world["is_abroad"] and not (phone["roaming_enabled"] and world["roaming_allowed"]):
            return False
        return phone["data_enabled"] and not world["mobile_data_usage_exceeded"]

    def _speed(self) -> tuple[float | None, str]:
        phone = self._phone
        tech = phone["network_technology_connected"]
        if not self._data_working() or tech not in SPEED_RANGES:
            return None, "No Connection"
        factor = 1.0
        vpn = phone["vpn_details"]
        if phone["vpn_connected"] and vpn and vpn["server_performance"] == "poor":
            factor = 0.1
        if phone["data_saver_mode"]:
            factor *= 0.2
        low, high = SPEED_RANGES[tech]
        mbps = round((low + high) / 2 * SIGNAL_FACTOR[phone["network_signal_strength"]] * factor, 2)
        return mbps, _speed_label(mbps)

    def _mms_ok(self) -> bool:
        phone = self._phone
        if not self._data_working() or phone["network_technology_connected"] == "2G":
            return False
        if phone["wifi_calling_enabled"] and phone["wifi_calling_mms_over_wifi"]:
            return False
        if phone["active_apn_settings"]["mmsc_url"] is None:
            return False
        app = phone["app_statuses"].get("messaging")
        return bool(app and app["permissions"]["sms"] and app["permissions"]["storage"])

    def _app(self, app_name: str) -> dict[str, Any]:
        app = self._phone["app_statuses"].get(app_name)
        if app is None:
            raise ToolError("not_found", f"App {app_name!r} is not installed")
        return app

    def _sim_status(self) -> str:
        """The SIM's status: missing when it is out, else the card's own status."""
        phone = self._phone
        return "missing" if phone["sim_card_missing"] else phone["sim_card_status"]

    def _sim_text(self) -> str:
        return {
            "active": "active",
            "missing": "no SIM card detected",
            "locked_pin": "locked (PIN required)",
            "locked_puk": "locked (PUK required)",
        }[self._sim_status()]
