"""Domain know-how of the offline stand-ins (:mod:`hasbench.participants.standin`).

One module per domain; each domain's registration names its playbook class
(``Domain.playbook``). A playbook reads texts into facts and proposes the next step from
what the stand-in knows, never from the task's answer key.
"""
