"""Telecom's setup helpers: the ``initialization_actions`` that put a task in its state.

They are public methods but not tools: no participant sees or calls them. Each breaks (or
fixes) one thing on the phone or in the carrier database, e.g. airplane mode on, a locked
SIM, an overdue bill that suspended the line.
"""

from __future__ import annotations

from typing import Any

from hasbench.envs.base import ToolError
from hasbench.envs.telecom.db import TODAY
from hasbench.envs.telecom.phone import PERMISSIONS


class TelecomSetup:
    """The setup helpers, on the carrier database and the phone.

    Mixed into :class:`~hasbench.envs.telecom.environment.TelecomEnvironment`.
    """

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> None:
        """Set the data used on a line this cycle."""
        self._customer_line(customer_id, line_id)  # refuses a line the customer lacks
        self._line_to_change(line_id)["data_used_gb"] = data_used_gb

    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> None:
        """Create an overdue bill for the line's monthly price and suspend the line."""
        customer, line = self._customer_line(customer_id, line_id)
        if line["status"] != "Active":
            raise ToolError("precondition_failed", f"Line {line_id} is not Active")
        if any(self._bill(b)["status"] == "Overdue" for b in customer["bill_ids"]):
            raise ToolError("precondition_failed", f"Customer {customer_id} has an overdue bill")
        if self._peek("bills", "bill_id", new_bill_id) is not None:
            raise ToolError("precondition_failed", f"Bill {new_bill_id} already exists")
        price = self._plan(line["plan_id"])["price_per_month"]
        self.add_record(
            "bills",
            {
                "bill_id": new_bill_id,
                "customer_id": customer_id,
                "period_start": "2025-01-01",
                "period_end": "2025-01-31",
                "issue_date": "2025-01-01",
                "due_date": "2025-01-15",
                "total_due": price,
                "line_items": [
                    {
                        "description": f"Charge for line {line_id}",
                        "amount": price,
                        "date": TODAY,
                        "item_type": "Charge",
                    }
                ],
                "status": "Overdue",
            },
        )
        self._find("customers", "customer_id", customer_id)["bill_ids"].append(new_bill_id)
        line = self._line_to_change(line_id)
        line["status"] = "Suspended"
        line["suspension_start_date"] = TODAY
        if contract_ended:
            line["contract_end_date"] = "2025-01-31"

    def get_available_plan_ids(self) -> list[str]:
        """All plan ids."""
        return [p["plan_id"] for p in self.db["plans"]]

    def set_user_info(self, name: str, phone_number: str) -> None:
        """Say whose phone this is (the number must be a line in the carrier database)."""
        if self._peek("lines", "phone_number", phone_number) is None:
            raise ToolError("not_found", f"No line has phone number {phone_number}")
        self._world["name"] = name
        self._world["phone_number"] = phone_number
        if self.compat != "tau2":  # τ²-bench leaves the phone as it is until a search
            self.after_call(None)
            self._network_search()

    def set_user_location(self, abroad: bool) -> None:
        """Put the user at home or abroad."""
        self._world["is_abroad"] = abroad

    def _set_and_search(self, **fields: Any) -> None:
        self._phone.update(fields)
        self._network_search()

    def turn_airplane_mode_on(self) -> None:
        """Break: airplane mode on."""
        self._phone.update(wifi_connected=False, vpn_connected=False)
        self._set_and_search(airplane_mode=True)

    def turn_airplane_mode_off(self) -> None:
        """Airplane mode off."""
        self._set_and_search(airplane_mode=False)

    def unseat_sim_card(self) -> None:
        """Break: the SIM card is not seated."""
        self._set_and_search(sim_card_missing=True)

    def lock_sim_card(self, mode: str) -> None:
        """Break: the SIM is locked (mode "pin" or "puk")."""
        if mode not in ("pin", "puk"):
            raise ToolError("invalid_arguments", f"mode must be 'pin' or 'puk', not {mode!r}")
        self._set_and_search(sim_card_status=f"locked_{mode}")

    def turn_data_on(self) -> None:
        """Mobile data on (no network search)."""
        self._phone["data_enabled"] = True

    def turn_data_off(self) -> None:
        """Break: mobile data off."""
        self._set_and_search(data_enabled=False)

    def turn_roaming_on(self) -> None:
        """Device data roaming on."""
        self._set_and_search(roaming_enabled=True)

    def turn_roaming_off(self) -> None:
        """Break: device data roaming off."""
        self._set_and_search(roaming_enabled=False)

    def turn_data_saver_mode_on(self) -> None:
        """Break: data saver on."""
        self._phone["data_saver_mode"] = True

    def turn_data_saver_mode_off(self) -> None:
        """Data saver off."""
        self._phone["data_saver_mode"] = False

    def break_apn_settings(self) -> None:
        """Break: an unusable APN (no service)."""
        self.user_writable("device", "active_apn_settings")["apn_name"] = "broken"
        self._network_search()

    def break_apn_mms_setting(self) -> None:
        """Break: the MMS server address is missing."""
        self.user_writable("device", "active_apn_settings")["mmsc_url"] = None
        if self.compat != "tau2":  # τ²-bench does not search the network here
            self._network_search()

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> None:
        """Set Wi-Fi calling (and optionally MMS over Wi-Fi)."""
        self._phone["wifi_calling_enabled"] = enabled
        if mms_over_wifi is not None:
            self._phone["wifi_calling_mms_over_wifi"] = mms_over_wifi

    def break_vpn(self) -> None:
        """Break: a VPN connected to a poorly performing server."""
        self.connect_vpn()
        self.user_writable("device", "vpn_details")["server_performance"] = "poor"

    def remove_app_permission(self, app_name: str, permission: str) -> None:
        """Break: revoke an app permission."""
        if permission not in PERMISSIONS:
            raise ToolError("invalid_arguments", f"Unknown permission {permission!r}")
        self._app(app_name)  # refuses an app that is not installed
        self.user_writable("device", "app_statuses", app_name, "permissions")[permission] = False

    def simulate_network_search(self) -> None:
        """Run a network search now."""
        self._network_search()
