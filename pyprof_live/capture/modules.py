"""nn.Module paths from global forward hooks, and parameter names for AccumulateGrad.

The hooks only push and pop a path on the thread context and always return None (a forward hook
that returns a value would replace the module's output). Each adds the time it took to the thread's
``hook_ns``, which the next recorded op carries as profiler time (context.py). Paths come from ``named_modules()`` of
the outermost module called, prefixed with its class name: ``ResNet.layer1.0.conv1``.
"""

from __future__ import annotations

import time

import torch

from .. import torch_compat
from . import fx_graphs
from .context import context

_compiling = torch_compat.is_compiling
_now = time.perf_counter_ns


class ModuleNames:
    """id(module) -> path and id(parameter) -> name, learnt as modules run; cleared per profile."""

    def __init__(self, warnings: list):
        self.warnings = warnings  # the profile's: what could not be read is said there
        self.paths: dict = {}
        self.param_names: dict = {}
        #: id(code) -> fx_graphs.GraphCall of each FX graph met in the profile segment, kept after remove() for its
        #: records (built at their first read); the next segment's start() clears it
        self.graph_calls: dict = {}
        self._handles: list = []

    def install(self) -> None:
        self._handles = torch_compat.register_global_module_hooks(self._enter, self._exit)

    def remove(self) -> None:
        self.suspend()
        fx_graphs.forget(self.graph_calls)
        self.paths.clear()
        self.param_names.clear()

    def suspend(self) -> None:
        """Take the hooks off, keeping what was learnt (torch.compile must not see them: see compiled.py)."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def resume(self) -> None:
        if not self._handles:
            self.install()

    def _enter(self, module, args):
        if _compiling():  # Dynamo tracing the model (torch 2.6 traces it under our op hook): nothing to do
            return
        began = _now()
        ctx = context
        path = self.paths.get(id(module))
        if path is None:
            path = self._learn(module, ctx.module_stack)
        ctx.module_stack.append((module, ctx.module))
        ctx.module = path
        ctx.hook_ns += _now() - began

    def _exit(self, module, args, output):
        if _compiling():
            return
        began = _now()
        ctx = context
        stack = ctx.module_stack
        # Pop down to this module: a module that raised in a child may leave entries above it.
        while stack:
            entry, outer = stack.pop()
            if entry is module:
                ctx.module = outer
                break
        else:
            ctx.module = ""
        ctx.hook_ns += _now() - began

    def _learn(self, module, stack) -> str:
        """Name a module seen for the first time, and every module and parameter below it."""
        parent_path = ""
        if stack:
            parent = stack[-1][0]
            parent_path = self.paths[id(parent)]
            prefix = next(
                (f"{parent_path}.{name}" for name, child in parent.named_modules() if child is module and name),
                f"{parent_path}.{type(module).__name__}",
            )
        elif isinstance(module, _GraphModule):  # an exported program is named as the model it was traced from
            prefix = fx_graphs.traced_class_name(module) or type(module).__name__
        else:
            prefix = type(getattr(module, _COMPILED_WRAPPER, module)).__name__
        # Parameters are named in the same walk as modules, as nn.Module.named_parameters() names them (each
        # module's own, first name kept), unless the module names them its own way (FSDP drops its wrapper):
        # a second walk of the tree cost ~0.1 ms at each profile's first module call (a small GPT's 27 modules).
        own_walk = (type(module).named_parameters, type(module)._named_members) != _MODULE_PARAMETER_WALK
        for name, child in module.named_modules():
            name = _without_compiled_wrapper(name)
            path = f"{prefix}.{name}" if name else prefix
            self.paths.setdefault(id(child), path)
            if isinstance(child, _GraphModule):
                fx_graphs.learn(child, self.paths[id(child)], parent_path, self.paths, self.graph_calls, self.warnings)
            if not own_walk:
                for key, param in child._parameters.items():
                    if param is not None:
                        self.param_names.setdefault(id(param), f"{path}.{key}")
        if own_walk:
            for name, param in module.named_parameters():
                self.param_names.setdefault(id(param), f"{prefix}.{_without_compiled_wrapper(name)}")
        return self.paths[id(module)]


_COMPILED_WRAPPER = torch_compat.COMPILED_MODULE_ATTRIBUTE
_GraphModule = torch.fx.GraphModule
#: How nn.Module names its parameters (named_parameters walks _named_members): a class with its own is asked.
_MODULE_PARAMETER_WALK = (torch.nn.Module.named_parameters, torch.nn.Module._named_members)


def _without_compiled_wrapper(name: str) -> str:
    """``_orig_mod.0`` -> ``0``: a compiled module has the path (and parameter names) of the one it wraps."""
    return ".".join(part for part in name.split(".") if part != _COMPILED_WRAPPER)
