"""ScriptedApprover: answers approval requests from a script and records them."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver

Answer = bool | ApprovalAnswer | Callable[[ApprovalRequest], bool | ApprovalAnswer]


class ScriptedApprover(Approver):
    """Gives the scripted answers in order; when the script runs out, answers ``default``
    (not approved unless you say otherwise). ``requests`` records what was asked."""

    def __init__(self, answers: Iterable[Answer] = (), *, default: bool = False) -> None:
        self._answers = list(answers)
        self.default = default
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        """See ``Approver.decide``."""
        self.requests.append(request)
        answer: Answer = self._answers.pop(0) if self._answers else self.default
        if callable(answer):
            answer = answer(request)
        if isinstance(answer, bool):
            return ApprovalAnswer(approved=answer)
        return answer
