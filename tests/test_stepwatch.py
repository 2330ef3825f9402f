"""What the step watch reads at each optimizer step (grad_magic/stepwatch.py): the models the user's frames
hold and their layers' modes then, the locals whose graph grows from step to step, gradients cleared or only
clipped, a step(closure) run as the user's code -- and that watching keeps nothing alive."""
from __future__ import annotations

import gc

import torch
import torch.nn as nn

import grad_magic

torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)  # NB: sympy's warning filter, at collection


class Holder:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.model, self.optimizer = model, optimizer

    def fit(self, x: torch.Tensor, steps: int) -> list:
        outputs, total = [], 0.0
        for i in range(steps):
            if i == 2:
                self.model.eval()
            self.optimizer.zero_grad()
            loss = self.model(x).pow(2).mean()
            loss.backward()
            self.optimizer.step()
            outputs.append({"loss": loss})
            total += loss
        return outputs


def _setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 1))
    return model, torch.optim.SGD(model.parameters(), lr=0.01), torch.randn(8, 3)


def test_the_models_a_method_holds_and_their_modes_at_each_step():
    model, opt, x = _setup()
    with grad_magic.capture() as run:
        Holder(model, opt).fit(x, 5)
    steps = run.record.steps
    assert len(steps) == 5
    held = [next(m for m in s.models if m.stepped) for s in steps]
    assert {h.path for h in held} == {"self.model"} and all(h.model() is model for h in held)
    assert [len(h.eval_layers) for h in held] == [0, 0, 1, 1, 1]  # NB: eval() from the third pass on
    assert [h.train_layers for h in held] == [1, 1, 0, 0, 0]


def test_a_long_loop_reads_modes_at_every_step_and_its_names_again_at_each_look():
    """A loop's names are read again at every second step the watch looks at after its first LOOK_FIRST (steps
    32, 128, then every 2 * LOOK_EVERY), and when the step comes from elsewhere; the layers' modes at every step:
    an eval() at step 38 is seen at step 38 (not a step looked at), a model rebound at step 20 (the old one still
    alive) is seen at the next step whose look reads the names (32)."""
    from grad_magic.stepwatch import LOOK_FIRST, looks_at

    looked = [n for n in range(1, 61) if looks_at(n)]
    resolved = [n for i, n in enumerate(looked, 1) if i & (i - 1) == 0 or i > LOOK_FIRST and i % 2 == 0]
    switch = min(n for n in resolved if n > 20)
    assert switch == 32

    models = [nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)) for _ in range(2)]
    opt = torch.optim.SGD([p for m in models for p in m.parameters()], lr=0.01)
    x = torch.randn(4, 3)
    with grad_magic.capture() as run:
        model = models[0]
        for i in range(60):
            if i == 20:
                model = models[1]
            if i == 37:
                model.eval()
            model(x).sum().backward()
            opt.step()
            opt.zero_grad()
    held = [next(h for h in s.models if h.path == "model") for s in run.record.steps]
    owners = [models.index(h.model()) for h in held]
    assert owners == [0] * (switch - 1) + [1] * (61 - switch)
    assert [len(h.eval_layers) for h in held] == [0] * 37 + [1] * 23


def test_the_looks_come_at_the_first_steps_then_at_powers_of_two_and_every_look_every():
    """The steps looked at whatever calls them, and `next_look` (the step hooks' shortcut) agrees with them."""
    from grad_magic.stepwatch import LOOK_EVERY, LOOK_FIRST, looks_at, next_look

    assert [n for n in range(1, 300) if looks_at(n)] == [*range(1, LOOK_FIRST + 1), 16, 32, 64, 128, 192, 256]
    assert LOOK_EVERY == 64
    for n in range(0, 3000):
        assert next_look(n) == min(m for m in range(n + 1, n + LOOK_EVERY + 2) if looks_at(m))


def test_locals_whose_graph_grows_are_seen_after_two_steps_in_a_row():
    model, opt, x = _setup()
    with grad_magic.capture() as run:
        Holder(model, opt).fit(x, 5)
    grown = {(g.name, g.kind) for s in run.record.steps for g in s.growing}
    assert grown == {("outputs", "list"), ("total", "tensor")}
    last = {g.name: g for g in run.record.steps[-1].growing}
    assert last["outputs"].item == "dict" and last["outputs"].size == 4 and last["outputs"].function == "Holder.fit"
    assert last["total"].numel == 1 and last["total"].grad_fn == "AddBackward0"


def test_watching_keeps_no_model_alive():
    with grad_magic.capture() as run:  # NB: made inside: the capture's own copy of this frame's names has none
        Holder(*_setup()[:2]).fit(torch.randn(8, 3), 3)
    gc.collect()
    assert run.record.steps[0].models[0].model() is None


def test_clipped_gradients_are_not_cleared_ones():
    model, opt, x = _setup()
    with grad_magic.capture() as run:
        for _ in range(3):
            model(x).pow(2).mean().backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    assert [s.stale_params for s in run.record.steps] == [0, 4, 4]


def test_a_closure_is_tracked_and_its_gradients_counted_after_the_step():
    model, opt, x = _setup()

    def closure():
        opt.zero_grad()
        h = model[0](x)
        h += 1.0  # NB: an in-place op of the user's, inside the step
        loss = model[2](h).pow(2).mean()
        loss.backward()
        return loss

    with grad_magic.capture() as run:
        for _ in range(2):
            opt.step(closure)
    assert [(s.closure, s.params_with_grad) for s in run.record.steps] == [(True, 4), (True, 4)]
    assert [e.name for e in run.record.inplace_ops].count("add_") == 2


def test_a_long_loop_is_looked_at_closely_at_its_first_steps_then_every_look_every_steps():
    """Steps 1..LOOK_FIRST, the powers of two and every LOOK_EVERY-th are looked at (stale gradients counted,
    the stack walked); a step in between is recorded as the last look. Gradients left uncleared from step 101 on are seen by the
    next look; a step called from another line is looked at at once (its own line, its own stale count)."""
    from grad_magic.stepwatch import LOOK_EVERY, LOOK_FIRST, looks_at

    model, opt, x = _setup()
    with grad_magic.capture() as run:
        for i in range(150):
            if i < 100:
                opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        opt.step()  # NB: another line, right after the loop's last step: looked at
    steps = run.record.steps
    assert len(steps) == 151 and all(looks_at(n) for n in range(1, LOOK_FIRST + 1))
    assert [looks_at(n) for n in (LOOK_FIRST + 1, LOOK_EVERY * 7)] == [False, True]
    looked = [n for n in range(1, 151) if looks_at(n)]
    for n in range(1, 151):  # NB: a step in between: the same record as the last look's
        assert steps[n - 1] is steps[max(k for k in looked if k <= n) - 1]
    first_stale = next(n for n, s in enumerate(steps, 1) if s.stale_params)
    assert first_stale == min(n for n in looked if n > 100) and first_stale - 100 <= LOOK_EVERY
    # NB: looked at as it comes from another line; it steps on gradients added onto since the last look, never cleared
    assert steps[-1].lineno == steps[0].lineno + 1 and steps[-1].stale_params == 4


def _fresh_counts(loop: str, steps: int = 4) -> list:
    """`fresh_params` of each recorded step of a 2-parameter model trained `steps` times with `loop`."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 3)
    with grad_magic.capture() as run:
        for _ in range(steps):
            exec(loop, {"model": model, "opt": opt, "x": x, "torch": torch})
    return [s.fresh_params for s in run.record.steps]


def test_fresh_gradients_are_told_from_gradients_only_cleared():
    """A backward since the last step makes the parameters' gradients fresh however they were cleared; an
    optimizer whose parameters no backward reached (cleared in place, never added to) has none."""
    backward = "model(x).pow(2).mean().backward()\nopt.step()\n"
    assert _fresh_counts("opt.zero_grad()\n" + backward) == [2, 2, 2, 2]  # NB: set_to_none: new .grad objects
    assert _fresh_counts("opt.zero_grad(set_to_none=False)\n" + backward)[1:] == [2, 2, 2]
    assert _fresh_counts("grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
                         "if grads:\n    torch._foreach_zero_(grads)\n" + backward)[1:] == [2, 2, 2]
    assert _fresh_counts(backward)[1:] == [2, 2, 2]  # NB: never cleared: stale, and fresh too
    torch.manual_seed(0)
    model, other = nn.Linear(3, 1), nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model(torch.randn(2, 3)).sum().backward()  # NB: gradients left from before the run
    with grad_magic.capture() as run:
        for _ in range(4):
            opt.zero_grad(set_to_none=False)
            other(torch.randn(2, 3)).sum().backward()  # NB: the training runs another model
            opt.step()
    assert [s.fresh_params for s in run.record.steps] == [0, 0, 0, 0]
