"""SpineFL on Flower's Message API: a strategy, a ClientApp factory and a simulation driver.

The distributed path runs the same :class:`~icml26.spinefl.server.SubmodelServer` (selector,
slicing, count aggregation, histories) and the same client step
(:func:`~icml26.spinefl.training.local_train`) as the in-process loop; only the transport
differs. ``configure_train`` sends every sampled node its sliced ``ArrayRecord`` and, in the
``ConfigRecord``, its index sets, seed and local-training settings; ``aggregate_train``
count-averages the replies and updates the activation histories. Because every random draw
derives from (seed, round, client), a Flower run reproduces the in-process run.

Flower (``flwr[simulation]``, with Ray) is an optional dependency of the ``spinefl`` extra, imported
only when this module is. Built on ``flwr.serverapp.strategy.Strategy`` (Flower >= 1.20), not
the legacy ``flwr.server.strategy`` API the spec sketches.

Deviations: nodes learn their client (partition) id from ``context.node_config["partition-id"]``;
the server asks for it once with a ``query`` message before round 1. Clients do not evaluate
(``configure_evaluate`` sends nothing); the server evaluates centrally.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from icml26.core import check_in_interval, check_positive_int, require

require("flwr", "spinefl", owner="icml26.spinefl.flower")

from flwr.app import (  # noqa: E402 - after the install hint
    ArrayRecord,
    ConfigRecord,
    Context,
    Message,
    MessageType,
    MetricRecord,
    RecordDict,
)
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.serverapp import Grid, ServerApp  # noqa: E402
from flwr.serverapp.strategy import Strategy  # noqa: E402

from icml26.spinefl.models import AbstractSliceableModel  # noqa: E402
from icml26.spinefl.server import RoundPlan, SubmodelServer  # noqa: E402
from icml26.spinefl.simulation import History  # noqa: E402
from icml26.spinefl.training import ClientUpdate, evaluate_accuracy, local_train  # noqa: E402

__all__ = ["SpineFLStrategy", "make_client_app", "run_flower_simulation"]

logger = logging.getLogger(__name__)
ClientData = tuple[np.ndarray, np.ndarray]


class SpineFLStrategy(Strategy):
    """A Flower strategy that sends every node its own sub-model and count-averages replies.

    Parameters
    ----------
    server
        The :class:`SubmodelServer` holding the global model, the selector and the ratios.
    node_to_client
        Flower node id -> client (partition) id, for every node that may be sampled.
    local_epochs, lr, batch_size, momentum, weight_decay
        Local SGD settings sent to the nodes.

    Attributes
    ----------
    history_
        Mean local training loss per round (``train_loss``).
    """

    def __init__(
        self,
        server: SubmodelServer,
        node_to_client: Mapping[int, int],
        *,
        local_epochs: int = 1,
        lr: float = 0.05,
        batch_size: int = 32,
        momentum: float = 0.9,
        weight_decay: float = 0.0,
    ) -> None:
        if not isinstance(server, SubmodelServer):
            raise TypeError(f"SpineFLStrategy: server must be a SubmodelServer; got {server!r}.")
        clients = sorted(node_to_client.values())
        if clients != list(range(server.n_clients)):
            raise ValueError(
                f"SpineFLStrategy: node_to_client must map one node to each of the "
                f"{server.n_clients} clients; got clients {clients}."
            )
        self.server = server
        self.node_to_client = dict(node_to_client)
        self.client_to_node = {c: n for n, c in self.node_to_client.items()}
        self.train_config = {
            "local-epochs": check_positive_int("local_epochs", local_epochs),
            "lr": float(lr),
            "batch-size": check_positive_int("batch_size", batch_size),
            "momentum": float(momentum),
            "weight-decay": float(weight_decay),
        }
        self.history_: dict[str, list[float]] = {"train_loss": []}
        self._plan: RoundPlan | None = None

    def summary(self) -> None:
        """Log the strategy's settings."""
        logger.info(
            "SpineFLStrategy: %s over %d clients, participation %.2f, %s",
            type(self.server.selector).__name__,
            self.server.n_clients,
            self.server.participation,
            self.train_config,
        )

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        """Plan round ``server_round - 1`` and send each participant its sub-model (§2.8 a-b)."""
        plan = self.server.plan_round(server_round - 1)
        self._plan = plan
        messages = []
        for i, c in enumerate(plan.clients):
            sub = self.server.submodel(plan.index_sets[i])
            cfg: dict[str, Any] = {**self.train_config, **dict(config.items())}
            cfg.update({"server-round": server_round, "client": c, "seed": plan.seeds[i]})
            for name, idx in plan.index_sets[i].items():
                cfg[f"idx.{name}"] = [int(j) for j in idx]
            if plan.nested_widths[i] is not None:
                for name in plan.index_sets[i]:
                    cfg[f"nested.{name}"] = [w[name] for w in plan.nested_widths[i]]
            content = RecordDict(
                {"arrays": ArrayRecord(sub.state_dict()), "config": ConfigRecord(cfg)}
            )
            messages.append(
                Message(content, dst_node_id=self.client_to_node[c], message_type=MessageType.TRAIN)
            )
        return messages

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        """Count-average the sub-models and update the histories (§2.7, §2.3)."""
        plan = self._plan
        if plan is None or plan.t != server_round - 1:
            raise ValueError(f"SpineFLStrategy: round {server_round} was not configured.")
        by_client: dict[int, ClientUpdate] = {}
        for reply in replies:
            if reply.has_error():
                raise RuntimeError(
                    f"SpineFLStrategy: node {reply.metadata.src_node_id} failed: "
                    f"{reply.error.reason}"
                )
            c = self.node_to_client[reply.metadata.src_node_id]
            metrics = reply.content["metrics"]
            state = reply.content["arrays"].to_torch_state_dict()
            by_client[c] = ClientUpdate(
                state=dict(state),
                n_samples=int(metrics["num-examples"]),
                freq={
                    name: np.asarray(metrics[f"freq.{name}"], dtype=float)
                    for name in plan.index_sets[0]
                },
                loss=float(metrics["train-loss"]),
            )
        missing = sorted(set(plan.clients) - set(by_client))
        if missing:
            raise RuntimeError(f"SpineFLStrategy: no reply from clients {missing}.")
        updates = [by_client[c] for c in plan.clients]
        self.server.finish_round(plan, updates)
        loss = float(np.mean([u.loss for u in updates]))
        self.history_["train_loss"].append(loss)
        return ArrayRecord(self.server.model.state_dict()), MetricRecord({"train-loss": loss})

    def configure_evaluate(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        """No federated evaluation: the server evaluates centrally."""
        return []

    def aggregate_evaluate(
        self, server_round: int, replies: Iterable[Message]
    ) -> MetricRecord | None:
        """Nothing to aggregate (see :meth:`configure_evaluate`)."""
        return None


def _check_model_fn(model_fn: object, owner: str) -> None:
    if not callable(model_fn):
        raise TypeError(f"{owner}: model_fn must be callable; got {type(model_fn).__name__}.")


def _check_clients(clients: object, owner: str, name: str = "clients") -> list[ClientData]:
    """A list of (X, y) pairs with as many labels as inputs."""
    if isinstance(clients, str) or not isinstance(clients, Sequence):
        raise TypeError(f"{owner}: {name} must be a list of (X, y) pairs; got {clients!r}.")
    out = []
    for pair in clients:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"{owner}: {name} must hold (X, y) pairs; got {pair!r}.")
        try:
            shape_X, shape_y = (tuple(np.shape(a)) for a in pair)
        except ValueError:  # ragged
            raise TypeError(f"{owner}: {name} must hold (X, y) arrays.") from None
        if len(shape_X) < 1 or len(shape_y) != 1 or shape_X[0] != shape_y[0]:
            raise ValueError(f"{owner}: {name} must hold (X (n, ...), y (n,)) pairs.")
        out.append((pair[0], pair[1]))
    return out


def make_client_app(
    model_fn: Callable[[], AbstractSliceableModel], clients: Sequence[ClientData]
) -> ClientApp:
    """A ``ClientApp`` whose node ``partition-id`` = c trains on ``clients[c]``.

    It answers the server's ``query`` with its partition id, and a ``train`` message by
    rebuilding the sub-model from the index sets, running :func:`local_train` and replying
    with the trained arrays, ``num-examples``, ``train-loss`` and ``freq.<layer>`` metrics.
    """
    owner = "make_client_app"
    _check_model_fn(model_fn, owner)
    data = _check_clients(clients, owner)
    app = ClientApp()

    @app.query()
    def query(message: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"])
        return Message(
            RecordDict({"config": ConfigRecord({"partition-id": pid})}), reply_to=message
        )

    @app.train()
    def train(message: Message, context: Context) -> Message:
        cfg = message.content["config"]
        pid = int(context.node_config["partition-id"])
        if int(cfg["client"]) != pid:
            raise ValueError(f"node of partition {pid} was sent client {cfg['client']}'s work")
        template = model_fn()
        layers = template.prunable_layers()
        sub = template.with_widths({name: len(cfg[f"idx.{name}"]) for name in layers})
        state = message.content["arrays"].to_torch_state_dict()
        sub.load_state_dict(state, strict=True, assign=True)
        nested = None
        if f"nested.{layers[0]}" in cfg:
            levels = len(cfg[f"nested.{layers[0]}"])
            nested = [
                {name: int(cfg[f"nested.{name}"][k]) for name in layers} for k in range(levels)
            ]
        X, y = data[pid]
        update = local_train(
            sub,
            X,
            y,
            epochs=int(cfg["local-epochs"]),
            lr=float(cfg["lr"]),
            batch_size=int(cfg["batch-size"]),
            momentum=float(cfg["momentum"]),
            weight_decay=float(cfg["weight-decay"]),
            seed=int(cfg["seed"]),
            nested_widths=nested,
        )
        metrics: dict[str, Any] = {"num-examples": update.n_samples, "train-loss": update.loss}
        for name, freq in update.freq.items():
            metrics[f"freq.{name}"] = [float(f) for f in freq]
        reply = RecordDict({"arrays": ArrayRecord(update.state), "metrics": MetricRecord(metrics)})
        return Message(reply, reply_to=message)

    return app


def run_flower_simulation(
    model_fn: Callable[[], AbstractSliceableModel],
    server: SubmodelServer,
    clients: Sequence[ClientData],
    rounds: int,
    *,
    local_epochs: int = 1,
    lr: float = 0.05,
    batch_size: int = 32,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    test: ClientData | None = None,
    backend_config: dict[str, Any] | None = None,
) -> History:
    """Run ``rounds`` rounds through ``flwr.simulation.run_simulation`` (one supernode per client).

    ``server.model`` must be ``model_fn()``'s architecture; it is updated in place. Returns a
    :class:`History` with the global accuracy after every round (when ``test`` is given) and the
    final global parameters.
    """
    from flwr.simulation import run_simulation

    owner = "run_flower_simulation"
    _check_model_fn(model_fn, owner)
    if not isinstance(server, SubmodelServer):
        raise TypeError(f"{owner}: server must be a SubmodelServer; got {type(server).__name__}.")
    clients = _check_clients(clients, owner)
    rounds = check_positive_int("rounds", rounds, owner=owner)
    check_positive_int("local_epochs", local_epochs, owner=owner)
    check_positive_int("batch_size", batch_size, owner=owner)
    check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    check_in_interval("momentum", momentum, low=0.0, high=1.0, closed="left", owner=owner)
    check_in_interval("weight_decay", weight_decay, low=0.0, owner=owner)
    if test is not None:
        _check_clients([test], owner, name="test")
    if backend_config is not None and not isinstance(backend_config, dict):
        raise TypeError(
            f"{owner}: backend_config must be a dict or None; got {type(backend_config).__name__}."
        )
    if len(clients) != server.n_clients:
        raise ValueError(
            f"run_flower_simulation: clients must hold one dataset per client of the server "
            f"({server.n_clients}); got {len(clients)}."
        )
    start = time.perf_counter()
    history = History()
    failures: list[BaseException] = []
    server_app = ServerApp()

    @server_app.main()
    def main(grid: Grid, context: Context) -> None:
        try:
            deadline = time.monotonic() + 120.0
            while len(nodes := list(grid.get_node_ids())) < len(clients):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"run_flower_simulation: {len(nodes)} of {len(clients)} nodes connected."
                    )
                time.sleep(0.2)
            queries = [
                Message(
                    RecordDict({"config": ConfigRecord({})}),
                    dst_node_id=n,
                    message_type=MessageType.QUERY,
                )
                for n in nodes
            ]
            answers = grid.send_and_receive(queries)
            errors = [a.error.reason for a in answers if a.has_error()]
            if errors:
                raise RuntimeError(f"run_flower_simulation: query failed on a node: {errors[0]}")
            mapping = {
                a.metadata.src_node_id: int(a.content["config"]["partition-id"]) for a in answers
            }
            strategy = SpineFLStrategy(
                server,
                mapping,
                local_epochs=local_epochs,
                lr=lr,
                batch_size=batch_size,
                momentum=momentum,
                weight_decay=weight_decay,
            )

            def evaluate(server_round: int, arrays: ArrayRecord) -> MetricRecord | None:
                if test is None or server_round == 0:
                    return None
                history.rounds.append(server_round)
                history.global_acc.append(evaluate_accuracy(server.model, *test))
                return MetricRecord({"accuracy": history.global_acc[-1]})

            strategy.start(
                grid,
                ArrayRecord(server.model.state_dict()),
                num_rounds=rounds,
                evaluate_fn=evaluate,
            )
            history.train_loss = strategy.history_["train_loss"]
        except BaseException as err:  # re-raised in the caller's thread below
            failures.append(err)
            raise

    config = backend_config or {"client_resources": {"num_cpus": 1, "num_gpus": 0.0}}
    run_simulation(
        server_app=server_app,
        client_app=make_client_app(model_fn, clients),
        num_supernodes=len(clients),
        backend_config=config,
    )
    if failures:
        raise failures[0]
    if len(history.train_loss) != rounds:
        raise RuntimeError(
            f"run_flower_simulation: {len(history.train_loss)} of {rounds} rounds completed."
        )
    history.final_state = {k: v.detach().clone() for k, v in server.model.named_parameters()}
    history.wall_s = time.perf_counter() - start
    return history
