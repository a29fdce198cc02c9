"""The customer's tools on their phone (``side="user"``): checks and device actions.

The agent cannot call these; it asks the customer, through the control channel, to run
one. Where τ²-bench answers a refused device action with a sentence (paying without a
payment request, an unknown network mode or permission, Wi-Fi in airplane mode), the call
here is a typed error with the state unchanged (:meth:`PhoneTools._refuse`); names,
parameters and effects are the same.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import WithJsonSchema

from hasbench.envs.base import ErrorType, ToolError, tool
from hasbench.envs.telecom.db import APNSettings
from hasbench.envs.telecom.phone import NETWORK_MODES, PERMISSIONS

NetworkMode = Annotated[str, WithJsonSchema({"type": "string", "enum": list(NETWORK_MODES)})]
"""A network mode; checked by the tool (τ² mode answers an unknown one with a sentence)."""
Permission = Annotated[str, WithJsonSchema({"type": "string", "enum": list(PERMISSIONS)})]


class PhoneTools:
    """The customer's tools on the simulated phone.

    They act on the :class:`~hasbench.envs.telecom.phone.Phone`; mixed into
    :class:`~hasbench.envs.telecom.environment.TelecomEnvironment`.
    """

    def _refuse(self, error_type: ErrorType, message: str) -> str:
        """Refuse a device action: a typed error, or in τ² mode a sentence.

        τ²-bench's phone answers such an action with a sentence: the call counts as done
        and changes nothing.
        """
        if self.compat == "tau2":
            return f"{message}."
        raise ToolError(error_type, message)

    @tool(kind="read", side="user")
    def check_status_bar(self) -> str:
        """What the phone's status bar shows right now."""
        phone = self._phone
        parts = []
        if phone["airplane_mode"]:
            parts.append("Airplane mode")
        elif phone["network_connection_status"] == "no_service":
            parts.append("No service")
        else:
            parts.append(f"Signal: {phone['network_signal_strength']}")
            parts.append(phone["network_technology_connected"])
        data_on = phone["data_enabled"] and phone["network_technology_connected"] != "none"
        data = "Mobile data on" if data_on else "Mobile data off"
        parts.append(data + (" (data saver)" if phone["data_saver_mode"] else ""))
        if phone["wifi_connected"]:
            parts.append(f"Wi-Fi: {phone['wifi_ssid']}")
        if phone["vpn_connected"]:
            parts.append("VPN")
        parts.append(f"Battery {phone['battery_level']}%")
        return " | ".join(parts)

    @tool(kind="read", side="user")
    def check_network_status(self) -> str:
        """The phone's network details: service, signal, technology, data, roaming, Wi-Fi."""
        phone = self._phone
        wifi = f"connected to {phone['wifi_ssid']}" if phone["wifi_connected"] else "not connected"
        return "\n".join(
            [
                f"Airplane mode: {'on' if phone['airplane_mode'] else 'off'}",
                f"SIM card: {self._sim_text()}",
                f"Connection: {phone['network_connection_status']}",
                f"Signal strength: {phone['network_signal_strength']}",
                f"Network type: {phone['network_technology_connected']}",
                f"Mobile data: {'on' if phone['data_enabled'] else 'off'}",
                f"Data roaming: {'on' if phone['roaming_enabled'] else 'off'}",
                f"Wi-Fi radio: {'on' if phone['wifi_enabled'] else 'off'}",
                f"Wi-Fi: {wifi}",
            ]
        )

    @tool(kind="read", side="user")
    def check_network_mode_preference(self) -> str:
        """Which mobile network types the phone prefers."""
        return f"Preferred network mode: {self._phone['network_mode_preference']}"

    @tool(kind="write", side="user", risk="low")
    def set_network_mode_preference(self, mode: NetworkMode) -> str:
        """Choose the preferred network types; the phone then searches for a network.

        Args:
            mode: One of 4g_5g_preferred, 4g_only, 3g_only, 2g_only.
        """
        if mode not in NETWORK_MODES:
            message = f"Unknown network mode {mode!r}; use one of {', '.join(NETWORK_MODES)}"
            return self._refuse("invalid_arguments", message)
        self._phone["network_mode_preference"] = mode
        self._network_search()
        return f"Preferred network mode set to {mode}. {self.check_status_bar()}"

    @tool(kind="read", side="user")
    def run_speed_test(self) -> str:
        """Measure the mobile internet speed."""
        mbps, label = self._speed()
        if mbps is None:
            return "Speed test failed: no connection."
        advice = "" if label == "Excellent" else " Streaming and large downloads may struggle."
        return f"Download speed {mbps:.2f} Mbps ({label}).{advice}"

    @tool(kind="write", side="user", risk="low")
    def toggle_airplane_mode(self) -> str:
        """Turn airplane mode on or off."""
        phone = self._phone
        phone["airplane_mode"] = not phone["airplane_mode"]
        if self.compat == "tau2":
            if phone["airplane_mode"] or phone["wifi_enabled"]:
                phone.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
            if phone["airplane_mode"] and phone["vpn_connected"]:
                phone.update(vpn_connected=False, vpn_details=None)
        else:
            phone["wifi_connected"] = False
            if phone["airplane_mode"]:
                phone["vpn_connected"] = False
        if not phone["airplane_mode"]:
            phone["network_connection_status"] = "searching"
        self._network_search()
        state = "on" if phone["airplane_mode"] else "off"
        return f"Airplane mode is now {state}. {self.check_status_bar()}"

    @tool(kind="read", side="user")
    def check_sim_status(self) -> str:
        """Whether the SIM card is present, active or locked."""
        return f"SIM card: {self._sim_text()}"

    @tool(kind="write", side="user", risk="low")
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back in."""
        self._phone["sim_card_missing"] = False
        self._network_search()
        return f"SIM card reinserted. {self.check_status_bar()}"

    @tool(kind="write", side="user", risk="low")
    def toggle_data(self) -> str:
        """Turn mobile data on or off."""
        phone = self._phone
        phone["data_enabled"] = not phone["data_enabled"]
        self._network_search()
        return f"Mobile data is now {'on' if phone['data_enabled'] else 'off'}."

    @tool(kind="write", side="user", risk="low")
    def toggle_roaming(self) -> str:
        """Turn data roaming on the phone on or off."""
        phone = self._phone
        phone["roaming_enabled"] = not phone["roaming_enabled"]
        self._network_search()
        return f"Data roaming is now {'on' if phone['roaming_enabled'] else 'off'}."

    @tool(kind="read", side="user")
    def check_data_restriction_status(self) -> str:
        """Whether data saver mode is on."""
        return f"Data saver: {'on' if self._phone['data_saver_mode'] else 'off'}"

    @tool(kind="write", side="user", risk="low")
    def toggle_data_saver_mode(self) -> str:
        """Turn data saver mode on or off."""
        phone = self._phone
        phone["data_saver_mode"] = not phone["data_saver_mode"]
        return f"Data saver is now {'on' if phone['data_saver_mode'] else 'off'}."

    @tool(kind="read", side="user")
    def check_apn_settings(self) -> str:
        """The access point name and MMS server address in use."""
        apn = self._phone["active_apn_settings"]
        return f"APN: {apn['apn_name']}; MMSC URL: {apn['mmsc_url'] or 'Not Set'}"

    @tool(kind="write", side="user", risk="medium")
    def set_apn_settings(self, apn_settings: dict[str, Any]) -> str:
        """Replace the APN settings (fields apn_name, mms_apn, mmsc_url, ...).

        Args:
            apn_settings: The new settings.
        """
        try:
            parsed = APNSettings.model_validate(apn_settings)
        except ValueError as exc:
            raise ToolError("invalid_arguments", f"apn_settings: {exc}") from None
        self._phone["active_apn_settings"] = parsed.model_dump(mode="json")
        self._network_search()
        return f"APN settings updated. {self.check_status_bar()}"

    @tool(kind="write", side="user", risk="low")
    def reset_apn_settings(self) -> str:
        """Schedule the APN settings to return to factory values at the next restart."""
        self._phone["active_apn_settings"]["reset_at_reboot"] = True
        self._network_search()
        return "APN settings will be reset to defaults when the phone restarts."

    @tool(kind="read", side="user")
    def check_wifi_status(self) -> str:
        """Whether Wi-Fi is on and connected."""
        phone = self._phone
        if not phone["wifi_enabled"]:
            return "Wi-Fi is off."
        if not phone["wifi_connected"]:
            return "Wi-Fi is on but not connected."
        return f"Wi-Fi connected to {phone['wifi_ssid']} ({phone['wifi_signal_strength']} signal)."

    @tool(kind="write", side="user", risk="low")
    def toggle_wifi(self) -> str:
        """Turn Wi-Fi on or off (not possible in airplane mode)."""
        phone = self._phone
        if phone["airplane_mode"]:
            return self._refuse(
                "precondition_failed", "Turn off airplane mode before changing Wi-Fi"
            )
        phone["wifi_enabled"] = not phone["wifi_enabled"]
        if not phone["wifi_enabled"]:
            phone.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        return f"Wi-Fi is now {'on' if phone['wifi_enabled'] else 'off'}."

    @tool(kind="read", side="user")
    def check_wifi_calling_status(self) -> str:
        """Whether Wi-Fi calling is on."""
        return f"Wi-Fi calling: {'on' if self._phone['wifi_calling_enabled'] else 'off'}"

    @tool(kind="write", side="user", risk="low")
    def toggle_wifi_calling(self) -> str:
        """Turn Wi-Fi calling on or off."""
        phone = self._phone
        phone["wifi_calling_enabled"] = not phone["wifi_calling_enabled"]
        return f"Wi-Fi calling is now {'on' if phone['wifi_calling_enabled'] else 'off'}."

    @tool(kind="read", side="user")
    def check_vpn_status(self) -> str:
        """Whether a VPN is connected, and how well its server performs."""
        phone = self._phone
        if phone["vpn_connected"] and phone["vpn_details"]:
            vpn = phone["vpn_details"]
            return (
                f"VPN connected to {vpn['server_address']} over {vpn['protocol']}; "
                f"server performance {vpn['server_performance']}."
            )
        if phone["vpn_enabled_setting"]:
            return "VPN is enabled but not connected."
        return "VPN is off."

    @tool(kind="write", side="user", risk="low")
    def connect_vpn(self) -> str:
        """Connect the VPN."""
        phone = self._phone
        if phone["vpn_connected"]:
            return "The VPN is already connected."
        phone["vpn_connected"] = True
        if self.compat != "tau2":  # τ²-bench connects without switching the setting on
            phone["vpn_enabled_setting"] = True
        phone["vpn_details"] = {
            "server_address": "192.168.1.1",
            "protocol": "OpenVPN",
            "server_performance": "excellent",
        }
        return "VPN connected."

    @tool(kind="write", side="user", risk="low")
    def disconnect_vpn(self) -> str:
        """Disconnect the VPN."""
        phone = self._phone
        if not phone["vpn_connected"]:
            return "There is no VPN connection to end."
        phone["vpn_connected"] = False
        phone["vpn_details"] = None
        return "VPN disconnected."

    @tool(kind="read", side="user")
    def check_installed_apps(self) -> str:
        """The apps installed on the phone."""
        return "Installed apps: " + ", ".join(sorted(self._phone["app_statuses"]))

    @tool(kind="read", side="user")
    def check_app_status(self, app_name: str) -> str:
        """An app's granted permissions.

        Args:
            app_name: The app, e.g. "messaging".
        """
        return self.check_app_permissions(app_name)

    @tool(kind="read", side="user")
    def check_app_permissions(self, app_name: str) -> str:
        """The permissions an app has been granted.

        Args:
            app_name: The app, e.g. "messaging".
        """
        app = self._phone["app_statuses"].get(app_name)
        if app is None:
            return self._refuse("not_found", f"App {app_name!r} is not installed")
        granted = [p for p in PERMISSIONS if app["permissions"][p]]
        return f"{app_name} permissions: {', '.join(granted) if granted else 'none'}"

    @tool(kind="write", side="user", risk="low")
    def grant_app_permission(self, app_name: str, permission: Permission) -> str:
        """Grant an app a permission (sms, storage, phone or network).

        Args:
            app_name: The app, e.g. "messaging".
            permission: The permission to grant.
        """
        app = self._phone["app_statuses"].get(app_name)
        if app is None:
            return self._refuse("not_found", f"App {app_name!r} is not installed")
        permission = permission.lower() if self.compat == "tau2" else permission
        if permission not in PERMISSIONS:
            message = f"Unknown permission {permission!r}; use one of {', '.join(PERMISSIONS)}"
            return self._refuse("invalid_arguments", message)
        app["permissions"][permission] = True
        return f"Granted {permission} to {app_name}."

    @tool(kind="read", side="user")
    def can_send_mms(self) -> str:
        """Try sending a picture message."""
        if self._mms_ok():
            return "A picture message can be sent."
        return "The picture message could not be sent."

    @tool(kind="write", side="user", risk="low")
    def reboot_device(self) -> str:
        """Restart the phone (applies a pending APN reset)."""
        phone = self._phone
        if phone["active_apn_settings"]["reset_at_reboot"]:
            phone["active_apn_settings"] = APNSettings().model_dump(mode="json")
        phone["network_connection_status"] = "searching"
        self._network_search()
        return f"The phone restarted. {self.check_status_bar()}"

    @tool(kind="read", side="user")
    def check_payment_request(self) -> str:
        """Whether the carrier has asked for a payment."""
        request = self._world["payment_request"]
        if request is None:
            return "There is no payment request."
        return f"Payment requested for bill {request['bill_id']}: ${request['amount_due']:.2f}."

    @tool(kind="write", side="user", risk="high")
    def make_payment(self) -> str:
        """Pay the bill the carrier asked for."""
        request = self._world["payment_request"]
        if request is None:
            return self._refuse("precondition_failed", "There is no payment request to pay")
        request["paid"] = True
        return f"Paid ${request['amount_due']:.2f} for bill {request['bill_id']}."
