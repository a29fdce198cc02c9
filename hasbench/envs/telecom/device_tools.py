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
from hasbench.envs.tau2 import said
from hasbench.envs.telecom import tau2_words as tau2
from hasbench.envs.telecom.db import APNSettings
from hasbench.envs.telecom.phone import NETWORK_MODES, PERMISSIONS

NetworkMode = Annotated[str, WithJsonSchema({"type": "string", "enum": list(NETWORK_MODES)})]
"""A network mode; checked by the tool (τ² mode answers an unknown one with a sentence)."""
Permission = Annotated[str, WithJsonSchema({"type": "string", "enum": list(PERMISSIONS)})]
FACTORY_APN = APNSettings().model_dump(mode="json")
"""The APN settings a reboot restores after a reset (copied: never changed in place)."""


def plain_apn_settings(settings: Any) -> dict[str, Any] | None:
    """APN settings of exactly the declared types as :class:`APNSettings` dumps them, or None.

    A mapping of known fields whose values already have their field's exact type (no
    conversion to make) gives what validating and dumping it gives, without the model:
    every field in declared order, the missing ones at their defaults. None: anything
    else, for the model to validate (or refuse).
    """
    if type(settings) is not dict or not FACTORY_APN.keys() >= settings.keys():
        return None
    for key, value in settings.items():
        if key == "apn_name":
            fits = type(value) is str and value in ("internet", "broken")
        elif key == "reset_at_reboot":
            fits = type(value) is bool
        elif key == "mms_port":
            fits = value is None or type(value) is int
        else:  # mms_apn, mmsc_url, mms_proxy: a text or None
            fits = value is None or type(value) is str
        if not fits:
            return None
    return {**FACTORY_APN, **settings}


class PhoneTools:
    """The customer's tools on the simulated phone.

    They act on the :class:`~hasbench.envs.telecom.phone.Phone`; mixed into
    :class:`~hasbench.envs.telecom.environment.TelecomEnvironment`.
    """

    def _refuse(self, error_type: ErrorType, message: str, tau2_words: str) -> str:
        """Refuse a device action: a typed error, or in τ² mode a sentence.

        τ²-bench's phone answers such an action with a sentence (``tau2_words``, what
        this mode shows): the call counts as done and changes nothing.
        """
        if self.compat == "tau2":
            return said(f"{message}.", tau2_words)
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
        return said(" | ".join(parts), f"Status Bar: {tau2.status_bar(phone)}")

    @tool(kind="read", side="user")
    def check_network_status(self) -> str:
        """The phone's network details: service, signal, technology, data, roaming, Wi-Fi."""
        phone = self._phone
        wifi = f"connected to {phone['wifi_ssid']}" if phone["wifi_connected"] else "not connected"
        ours = "\n".join(
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
        return said(ours, tau2.network_status(phone, self._sim_status()))

    @tool(kind="read", side="user")
    def check_network_mode_preference(self) -> str:
        """Which mobile network types the phone prefers."""
        mode = self._phone["network_mode_preference"]
        return said(f"Preferred network mode: {mode}", f"Network Mode Preference: {mode}")

    @tool(kind="write", side="user", risk="low")
    def set_network_mode_preference(self, mode: NetworkMode) -> str:
        """Choose the preferred network types; the phone then searches for a network.

        Args:
            mode: One of 4g_5g_preferred, 4g_only, 3g_only, 2g_only.
        """
        modes = ", ".join(NETWORK_MODES)
        if mode not in NETWORK_MODES:
            message = f"Unknown network mode {mode!r}; use one of {modes}"
            words = f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: {modes}"  # noqa: E501
            return self._refuse("invalid_arguments", message, tau2.with_bar(words, self._phone))
        self._phone["network_mode_preference"] = mode
        self._network_search()
        words = tau2.with_bar(f"Preferred Network Mode set to: {mode}", self._phone)
        return said(f"Preferred network mode set to {mode}. {self.check_status_bar()}", words)

    @tool(kind="read", side="user")
    def run_speed_test(self) -> str:
        """Measure the mobile internet speed."""
        mbps, label = self._speed()
        if mbps is None:
            return said("Speed test failed: no connection.", tau2.speed_test(mbps, label))
        advice = "" if label == "Excellent" else " Streaming and large downloads may struggle."
        ours = f"Download speed {mbps:.2f} Mbps ({label}).{advice}"
        return said(ours, tau2.speed_test(mbps, label))

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
        words = tau2.switched("Airplane Mode", phone["airplane_mode"], phone)
        return said(f"Airplane mode is now {state}. {self.check_status_bar()}", words)

    @tool(kind="read", side="user")
    def check_sim_status(self) -> str:
        """Whether the SIM card is present, active or locked."""
        return said(f"SIM card: {self._sim_text()}", tau2.SIM[self._sim_status()])

    @tool(kind="write", side="user", risk="low")
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back in."""
        self._phone["sim_card_missing"] = False
        self._network_search()
        words = tau2.with_bar("SIM card re-seated successfully.", self._phone)
        return said(f"SIM card reinserted. {self.check_status_bar()}", words)

    @tool(kind="write", side="user", risk="low")
    def toggle_data(self) -> str:
        """Turn mobile data on or off."""
        phone = self._phone
        phone["data_enabled"] = not phone["data_enabled"]
        self._network_search()
        words = tau2.switched("Mobile Data", phone["data_enabled"], phone)
        return said(f"Mobile data is now {'on' if phone['data_enabled'] else 'off'}.", words)

    @tool(kind="write", side="user", risk="low")
    def toggle_roaming(self) -> str:
        """Turn data roaming on the phone on or off."""
        phone = self._phone
        phone["roaming_enabled"] = not phone["roaming_enabled"]
        self._network_search()
        words = tau2.switched("Data Roaming", phone["roaming_enabled"], phone)
        return said(f"Data roaming is now {'on' if phone['roaming_enabled'] else 'off'}.", words)

    @tool(kind="read", side="user")
    def check_data_restriction_status(self) -> str:
        """Whether data saver mode is on."""
        on = self._phone["data_saver_mode"]
        words = "Data Saver mode is ON (limits data usage)." if on else "Data Saver mode is OFF."
        return said(f"Data saver: {'on' if on else 'off'}", words)

    @tool(kind="write", side="user", risk="low")
    def toggle_data_saver_mode(self) -> str:
        """Turn data saver mode on or off."""
        phone = self._phone
        phone["data_saver_mode"] = not phone["data_saver_mode"]
        words = tau2.switched("Data Saver Mode", phone["data_saver_mode"], phone)
        return said(f"Data saver is now {'on' if phone['data_saver_mode'] else 'off'}.", words)

    @tool(kind="read", side="user")
    def check_apn_settings(self) -> str:
        """The access point name and MMS server address in use."""
        apn = self._phone["active_apn_settings"]
        name, url = apn["apn_name"] or "Not Set", apn["mmsc_url"] or "Not Set"
        words = (f"Current APN Name: {name}\nMMSC URL (for picture messages): {url}\n(These "
                 "are technical settings, usually best left unchanged.)")  # fmt: skip
        return said(f"APN: {apn['apn_name']}; MMSC URL: {url}", words)

    @tool(kind="write", side="user", risk="medium")
    def set_apn_settings(self, apn_settings: dict[str, Any]) -> str:
        """Replace the APN settings (fields apn_name, mms_apn, mmsc_url, ...).

        Args:
            apn_settings: The new settings.
        """
        settings = plain_apn_settings(apn_settings)
        if settings is None:  # anything else: as the model validates it
            try:
                settings = APNSettings.model_validate(apn_settings).model_dump(mode="json")
            except ValueError as exc:
                raise ToolError("invalid_arguments", f"apn_settings: {exc}") from None
        self._phone["active_apn_settings"] = settings
        self._network_search()
        words = tau2.with_bar(f"APN settings set to: {settings['apn_name']}", self._phone)
        return said(f"APN settings updated. {self.check_status_bar()}", words)

    @tool(kind="write", side="user", risk="low")
    def reset_apn_settings(self) -> str:
        """Schedule the APN settings to return to factory values at the next restart."""
        self.user_writable("device", "active_apn_settings")["reset_at_reboot"] = True
        self._network_search()
        words = tau2.with_bar("APN settings will reset at reboot.", self._phone)
        return said("APN settings will be reset to defaults when the phone restarts.", words)

    @tool(kind="read", side="user")
    def check_wifi_status(self) -> str:
        """Whether Wi-Fi is on and connected."""
        phone = self._phone
        if not phone["wifi_enabled"]:
            ours = "Wi-Fi is off."
        elif not phone["wifi_connected"]:
            ours = "Wi-Fi is on but not connected."
        else:
            ours = (
                f"Wi-Fi connected to {phone['wifi_ssid']} ({phone['wifi_signal_strength']} signal)."
            )
        return said(ours, tau2.wifi_status(phone))

    @tool(kind="write", side="user", risk="low")
    def toggle_wifi(self) -> str:
        """Turn Wi-Fi on or off (not possible in airplane mode)."""
        phone = self._phone
        if phone["airplane_mode"]:
            words = "Cannot change Wi-Fi settings while Airplane Mode is ON."
            return self._refuse(
                "precondition_failed", "Turn off airplane mode before changing Wi-Fi",
                tau2.with_bar(words, phone),
            )  # fmt: skip
        phone["wifi_enabled"] = not phone["wifi_enabled"]
        if not phone["wifi_enabled"]:
            phone.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        words = tau2.switched("Wi-Fi", phone["wifi_enabled"], phone)
        return said(f"Wi-Fi is now {'on' if phone['wifi_enabled'] else 'off'}.", words)

    @tool(kind="read", side="user")
    def check_wifi_calling_status(self) -> str:
        """Whether Wi-Fi calling is on."""
        on = self._phone["wifi_calling_enabled"]
        words = f"Wi-Fi Calling is currently turned {'ON' if on else 'OFF'}."
        return said(f"Wi-Fi calling: {'on' if on else 'off'}", words)

    @tool(kind="write", side="user", risk="low")
    def toggle_wifi_calling(self) -> str:
        """Turn Wi-Fi calling on or off."""
        phone = self._phone
        phone["wifi_calling_enabled"] = not phone["wifi_calling_enabled"]
        on = phone["wifi_calling_enabled"]
        return said(f"Wi-Fi calling is now {'on' if on else 'off'}.",
                    tau2.switched("Wi-Fi Calling", on, phone))  # fmt: skip

    @tool(kind="read", side="user")
    def check_vpn_status(self) -> str:
        """Whether a VPN is connected, and how well its server performs."""
        phone = self._phone
        if phone["vpn_connected"] and phone["vpn_details"]:
            vpn = phone["vpn_details"]
            ours = (
                f"VPN connected to {vpn['server_address']} over {vpn['protocol']}; "
                f"server performance {vpn['server_performance']}."
            )
        elif phone["vpn_enabled_setting"]:
            ours = "VPN is enabled but not connected."
        else:
            ours = "VPN is off."
        return said(ours, tau2.vpn_status(phone))

    @tool(kind="write", side="user", risk="low")
    def connect_vpn(self) -> str:
        """Connect the VPN."""
        phone = self._phone
        if phone["vpn_connected"]:
            return said("The VPN is already connected.", "VPN already connected.")
        phone["vpn_connected"] = True
        if self.compat != "tau2":  # τ²-bench connects without switching the setting on
            phone["vpn_enabled_setting"] = True
        phone["vpn_details"] = {
            "server_address": "192.168.1.1",
            "protocol": "OpenVPN",
            "server_performance": "excellent",
        }
        return said("VPN connected.", tau2.with_bar("VPN connected successfully.", phone))

    @tool(kind="write", side="user", risk="low")
    def disconnect_vpn(self) -> str:
        """Disconnect the VPN."""
        phone = self._phone
        if not phone["vpn_connected"]:
            words = tau2.with_bar("No active VPN connection to disconnect.", phone)
            return said("There is no VPN connection to end.", words)
        phone["vpn_connected"] = False
        phone["vpn_details"] = None
        return said("VPN disconnected.", tau2.with_bar("VPN disconnected successfully.", phone))

    @tool(kind="read", side="user")
    def check_installed_apps(self) -> str:
        """The apps installed on the phone."""
        apps = self._phone["app_statuses"]
        words = f"The following apps are installed on the phone: {', '.join(apps)}"
        return said("Installed apps: " + ", ".join(sorted(apps)), words)

    @tool(kind="read", side="user")
    def check_app_status(self, app_name: str) -> str:
        """An app's granted permissions.

        Args:
            app_name: The app, e.g. "messaging".
        """
        app = self._phone["app_statuses"].get(app_name)
        granted = None if app is None else [p for p in PERMISSIONS if app["permissions"][p]]
        return said(self.check_app_permissions(app_name), tau2.app_status(app_name, granted))

    @tool(kind="read", side="user")
    def check_app_permissions(self, app_name: str) -> str:
        """The permissions an app has been granted.

        Args:
            app_name: The app, e.g. "messaging".
        """
        app = self._phone["app_statuses"].get(app_name)
        if app is None:
            words = tau2.app_permissions(app_name, None)
            return self._refuse("not_found", f"App {app_name!r} is not installed", words)
        granted = [p for p in PERMISSIONS if app["permissions"][p]]
        ours = f"{app_name} permissions: {', '.join(granted) if granted else 'none'}"
        return said(ours, tau2.app_permissions(app_name, granted))

    @tool(kind="write", side="user", risk="low")
    def grant_app_permission(self, app_name: str, permission: Permission) -> str:
        """Grant an app a permission (sms, storage, phone or network).

        Args:
            app_name: The app, e.g. "messaging".
            permission: The permission to grant.
        """
        phone = self._phone
        app = phone["app_statuses"].get(app_name)
        if app is None:
            words = f"Error. App '{app_name}' not found. Cannot grant permission."
            return self._refuse(
                "not_found", f"App {app_name!r} is not installed", tau2.with_bar(words, phone)
            )
        permission = permission.lower() if self.compat == "tau2" else permission
        if permission not in PERMISSIONS:
            message = f"Unknown permission {permission!r}; use one of {', '.join(PERMISSIONS)}"
            words = (f"Error. Permission '{permission}' not tracked for app '{app_name}', "
                     f"available permissions: {list(PERMISSIONS)}")  # fmt: skip
            return self._refuse("invalid_arguments", message, tau2.with_bar(words, phone))
        self.user_writable("device", "app_statuses", app_name, "permissions")[permission] = True
        words = f"Success. Permission '{permission}' granted to app '{app_name}'."
        return said(f"Granted {permission} to {app_name}.", tau2.with_bar(words, phone))

    @tool(kind="read", side="user")
    def can_send_mms(self) -> str:
        """Try sending a picture message."""
        if self._mms_ok():
            return said(
                "A picture message can be sent.", "Your messaging app can send MMS messages."
            )
        return said(
            "The picture message could not be sent.", "Your messaging app cannot send MMS messages."
        )

    @tool(kind="write", side="user", risk="low")
    def reboot_device(self) -> str:
        """Restart the phone (applies a pending APN reset)."""
        phone = self._phone
        steps = ["Restarting network services..."]
        if phone["active_apn_settings"]["reset_at_reboot"]:
            phone["active_apn_settings"] = dict(FACTORY_APN)
            steps.insert(0, "Resetting APN settings...")
        phone["network_connection_status"] = "searching"
        self._network_search()
        words = tau2.with_bar("\n".join(steps), phone)
        return said(f"The phone restarted. {self.check_status_bar()}", words)

    @tool(kind="read", side="user")
    def check_payment_request(self) -> str:
        """Whether the carrier has asked for a payment."""
        request = self._world["payment_request"]
        if request is None:
            return said("There is no payment request.", "No payment request has been made.")
        bill, amount = request["bill_id"], request["amount_due"]
        words = f"You have a payment request for bill {bill} of {amount} USD."
        return said(f"Payment requested for bill {bill}: ${amount:.2f}.", words)

    @tool(kind="write", side="user", risk="high")
    def make_payment(self) -> str:
        """Pay the bill the carrier asked for."""
        request = self.user_db["surroundings"]["payment_request"]  # copied below to change it
        if request is None:
            words = "You do not have a payment request."
            return self._refuse("precondition_failed", "There is no payment request to pay", words)
        request = self.user_writable("surroundings", "payment_request")
        request["paid"] = True
        words = (
            f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."
        )
        return said(f"Paid ${request['amount_due']:.2f} for bill {request['bill_id']}.", words)
