"""The state a dispatch gives each wave (AMDGPUUsage, "Initial Kernel Execution State"), and the
kernel-argument segment.

SGPRs: first the user SGPRs the descriptor enables, in this order: private segment buffer (4),
dispatch ptr (2), queue ptr (2), kernarg segment ptr (2), dispatch id (2), flat scratch init (2),
private segment size (1); then, from SGPR ``USER_SGPR_COUNT`` on, the system SGPRs: workgroup id
X, Y, Z (each if enabled), workgroup info, private segment wave offset. VGPRs: the work-item id,
packed into v0 (x | y << 10 | z << 20) on packed-TID targets (gfx90a, gfx942), else v0, v1, v2.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from tensile_asm.emulator.memory import scratch
from tensile_asm.emulator.state import EXEC_HI, EXEC_LO, READY, VKEY, Wave, mask_of
from tensile_asm.errors import UserError

_HIDDEN_ZERO = {"hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z", "hidden_none",
                "hidden_printf_buffer", "hidden_hostcall_buffer", "hidden_default_queue",
                "hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_heap_v1", "hidden_private_base",
                "hidden_shared_base", "hidden_queue_ptr", "hidden_remainder_x", "hidden_remainder_y",
                "hidden_remainder_z"}


@dataclass(eq=False)
class PointerArray:
    """An argument that is the address of a device array of 64-bit pointers, one per buffer in
    ``arrays`` (pointer-array batched GEMM). Each buffer is its own allocation, placed in ``order``
    (indices into ``arrays``; default: as listed), so the pointers need not rise with the index; each
    receives the kernel's writes like an array argument. The pointer array itself is read-only data."""

    arrays: list
    order: list | None = None


def _buffer(value: np.ndarray, name: str, memory, buffers):
    alloc = buffers.get(id(value))
    if alloc is None:
        raw = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        alloc = memory.alloc(raw.size, name, init=raw, array=value)
        buffers[id(value)] = alloc
    return alloc


def _pointer_array(value: PointerArray, name: str, memory, buffers, kernel: str):
    alloc = buffers.get(id(value))
    if alloc is not None:
        return alloc
    order = list(range(len(value.arrays))) if value.order is None else list(value.order)
    if sorted(order) != list(range(len(value.arrays))):
        raise UserError(f"kernel '{kernel}' argument '{name}': PointerArray order {order} is not a permutation "
                        f"of 0..{len(value.arrays) - 1}")
    bases = [0] * len(value.arrays)
    for i in order:
        bases[i] = _buffer(value.arrays[i], f"'{name}'[{i}]", memory, buffers).base
    alloc = memory.alloc(8 * len(bases), f"'{name}' pointer array", init=np.array(bases, np.uint64).view(np.uint8))
    buffers[id(value)] = alloc
    return alloc


def _arg_bytes(md: dict, value, memory, buffers, kernel: str) -> bytes:
    size, name = int(md[".size"]), md.get(".name", f"argument at offset {md['.offset']}")
    if isinstance(value, (np.ndarray, PointerArray)):
        if size != 8:
            raise UserError(f"kernel '{kernel}' argument '{name}' is {size} bytes, so it cannot take an "
                            f"array (arrays are passed as 8-byte addresses)")
        if isinstance(value, PointerArray):
            return _pointer_array(value, name, memory, buffers, kernel).base.to_bytes(8, "little")
        return _buffer(value, f"'{name}'", memory, buffers).base.to_bytes(8, "little")
    if isinstance(value, np.generic):
        raw = value.tobytes()
        if len(raw) != size:
            raise UserError(f"kernel '{kernel}' argument '{name}' is {size} bytes but got a {value.dtype} "
                            f"({len(raw)} bytes); pass a matching numpy scalar or a Python number")
        return raw
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"kernel '{kernel}' argument '{name}' got {type(value).__name__}; pass a numpy "
                        f"array, a numpy scalar, an int or a float")
    if isinstance(value, float):
        if size not in (4, 8):
            raise UserError(f"kernel '{kernel}' argument '{name}' is {size} bytes; a float needs 4 or 8")
        return struct.pack("<f" if size == 4 else "<d", value)
    return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def _hidden(kind: str, grid, block, lds_dynamic):
    dims = {"x": 0, "y": 1, "z": 2}
    if kind.startswith("hidden_block_count_"):
        return grid[dims[kind[-1]]]
    if kind.startswith("hidden_group_size_"):
        return block[dims[kind[-1]]]
    if kind == "hidden_grid_dims":
        return 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1
    if kind == "hidden_dynamic_lds_size":
        return lds_dynamic
    if kind in _HIDDEN_ZERO:
        return 0
    return None


def marshal_args(ko, args, memory, grid, block, lds_bytes):
    """Allocate the buffers and the kernarg segment; returns {id(array): Allocation} (+ 'kernarg')."""
    md_args = ko.args
    explicit = [a for a in md_args if not str(a.get(".value_kind", "")).startswith("hidden_")]
    args = list(args)
    if len(args) != len(explicit):
        names = ", ".join(a.get(".name", "?") for a in explicit)
        raise UserError(f"kernel '{ko.name}' takes {len(explicit)} arguments ({names}) but got {len(args)}")
    size = max([ko.descriptor.kernarg_size, int(ko.metadata.get(".kernarg_segment_size", 0))] +
               [int(a[".offset"]) + int(a[".size"]) for a in md_args])
    segment = bytearray(size)
    buffers: dict = {}
    for md, value in zip(explicit, args):
        raw = _arg_bytes(md, value, memory, buffers, ko.name)
        segment[int(md[".offset"]):int(md[".offset"]) + len(raw)] = raw
    lds_dynamic = lds_bytes - ko.descriptor.group_segment_fixed_size
    for md in md_args:
        kind = str(md.get(".value_kind", ""))
        if kind.startswith("hidden_"):
            v = _hidden(kind, grid, block, lds_dynamic)
            if v is not None:
                off, n = int(md[".offset"]), int(md[".size"])
                segment[off:off + n] = (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")
    # Runtimes hand out kernarg space in larger blocks; a kernel may load a whole s_load_dwordx16
    # past its last argument, so the segment is padded to 256 bytes.
    buffers["kernarg"] = memory.alloc(max(256, -(-size // 256) * 256), "kernarg segment", init=bytes(segment))
    return buffers


def copy_back(buffers) -> None:
    for key, alloc in buffers.items():
        if key == "kernarg" or alloc.array is None:
            continue
        arr = alloc.array
        flat = alloc.data[:alloc.size].view(arr.dtype) if alloc.size else np.empty(0, arr.dtype)
        np.copyto(arr, flat.reshape(arr.shape))


# bytes past the entry where a dispatch that preloads kernel arguments starts the kernel
PRELOAD_SKIP = 256


def _dispatch_packet(grid, block, lds, kernarg_address) -> bytes:
    """An hsa_kernel_dispatch_packet_t (64 bytes) with the sizes a kernel may read."""
    return struct.pack("<HHHHHHIIIIIQQQQ", 0, 3, block[0], block[1], block[2], 0,
                       grid[0] * block[0], grid[1] * block[1], grid[2] * block[2], 0, lds, 0,
                       kernarg_address, 0, 0)


class WaveSetup:
    """Builds the waves of each workgroup with their initial registers."""

    def __init__(self, arch, kd, limits, grid, block, memory, buffers, lds, kernarg_preload: bool = True):
        """``kernarg_preload``: the dispatch firmware preloads kernel arguments. Then, for a descriptor with a
        kernarg preload length (gfx940+), the dwords it names follow the enabled user SGPRs and the waves start
        ``PRELOAD_SKIP`` bytes past the entry (``preloaded``); without, they start at the entry, where the
        kernel's 256-byte header must load them itself (AMDGPUUsage "Preloaded Kernel Arguments")."""
        self.arch, self.kd, self.limits, self.grid, self.block = arch, kd, limits, grid, block
        self.lanes = arch.wavefront_size
        kernarg = buffers["kernarg"].base
        user = []
        if kd.enable_sgpr_private_segment_buffer:
            user += scratch.segment_buffer(kd.private_segment_fixed_size)
        if kd.enable_sgpr_dispatch_ptr:
            packet = memory.alloc(64, "dispatch packet", init=_dispatch_packet(grid, block, lds, kernarg))
            user += [packet.base & 0xFFFFFFFF, packet.base >> 32]
        if kd.enable_sgpr_queue_ptr:
            user += [0, 0]
        if kd.enable_sgpr_kernarg_segment_ptr:
            user += [kernarg & 0xFFFFFFFF, kernarg >> 32]
        if kd.enable_sgpr_dispatch_id:
            user += [0, 0]
        if kd.enable_sgpr_flat_scratch_init:              # the wave offset (below) is 0
            user += [scratch.PRIVATE_BASE & 0xFFFFFFFF, scratch.PRIVATE_BASE >> 32]
        if kd.enable_sgpr_private_segment_size:
            user += [kd.private_segment_fixed_size]
        self.preloaded = bool(kernarg_preload and kd.kernarg_preload_length)
        if self.preloaded:
            first, n = kd.kernarg_preload_offset, kd.kernarg_preload_length
            segment = bytes(buffers["kernarg"].data[4 * first:4 * (first + n)])
            if len(segment) < 4 * n:
                raise UserError(f"the kernel descriptor preloads kernarg dwords {first}..{first + n - 1}, past the "
                                f"{len(buffers['kernarg'].data)}-byte kernarg segment")
            user += list(struct.unpack(f"<{n}I", segment))
        if len(user) > kd.user_sgpr_count:
            raise UserError(f"the kernel descriptor enables {len(user)} user SGPRs but USER_SGPR_COUNT is "
                            f"{kd.user_sgpr_count}")
        self.user = user
        self.start_pc = 0                  # the op the waves start at (Emulator.launch sets it for preloading)
        self.packed = bool(arch.extra.get("packed_workitem_id", False))

    def populate(self, group) -> None:
        bx, by, bz = self.block
        threads = bx * by * bz
        lanes = self.lanes
        nwaves = -(-threads // lanes)
        kd = self.kd
        flat = np.arange(nwaves * lanes)
        tx, ty, tz = flat % bx, (flat // bx) % by, flat // (bx * by)
        live = flat < threads
        tx, ty, tz = np.where(live, tx, 0), np.where(live, ty, 0), np.where(live, tz, 0)
        ids = kd.enable_vgpr_workitem_id
        # One register store for the workgroup; each wave's registers are a column view of it, so
        # that waves running in lockstep can be executed as one wide batch (batch.py).
        group.vstore = np.zeros((max(self.limits.vgprs, 1), nwaves * lanes), np.uint32)
        group.astore = np.zeros((max(self.limits.agprs, 1), nwaves * lanes), np.uint32)
        for wi in range(nwaves):
            cols = slice(wi * lanes, (wi + 1) * lanes)
            w = Wave(wi, group, self.limits.vgprs, self.limits.agprs, lanes,
                     v=group.vstore[:, cols], a=group.astore[:, cols])
            sl = slice(wi * lanes, (wi + 1) * lanes)
            w.pc = self.start_pc
            s = w.s
            s[:len(self.user)] = self.user
            st = w.rstate
            for i in range(len(self.user)):
                st[i] = READY
            n = kd.user_sgpr_count
            system = [group.id[d] for d in range(3) if kd.enable_sgpr_workgroup_id[d]]
            if kd.enable_sgpr_workgroup_info:
                system.append(0)
            if kd.enable_private_segment:
                system.append(0)
            for j, value in enumerate(system):
                s[n + j] = value
                st[n + j] = READY
            if self.packed:
                v0 = tx[sl] | ((ty[sl] << 10) if ids >= 1 else 0) | ((tz[sl] << 20) if ids >= 2 else 0)
                w.v[0] = v0
                st[VKEY] = READY
            else:
                for d, t in enumerate((tx, ty, tz)[:ids + 1]):
                    if d < len(w.v):
                        w.v[d] = t[sl]
                        st[VKEY + d] = READY
            w.set_exec(mask_of(live[sl]))
            st[EXEC_LO] = st[EXEC_HI] = READY
            w.pending = _new_pending(self.arch)
            group.waves.append(w)


def _new_pending(arch):
    from tensile_asm.emulator.strict.waitcnt import Pending
    from tensile_asm.isa.counters import counter_limits
    return Pending(counter_limits(arch))
