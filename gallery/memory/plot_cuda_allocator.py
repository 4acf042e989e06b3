"""
Allocated and reserved CUDA memory, step by step
================================================

On a machine with a GPU, the script starts from an emptied cache, makes a 4,000,000-byte
tensor, deletes it, makes it again, and finally empties the cache, reading
``torch.cuda.memory_allocated()`` and ``memory_reserved()`` after each step. Allocated
memory counts the tensors' blocks; reserved memory counts the segments the caching
allocator holds :claim-ref:`memory.cuda.allocated-vs-reserved`, and a deleted tensor's
block stays reserved until ``empty_cache()`` :claim-ref:`memory.cuda.del-returns-to-cache`,
:claim-ref:`memory.cuda.empty-cache-frees-unused-segments`.

On a machine without a GPU the script draws nothing and says so; the pages that show its
figure then say "not run here".
"""
import matplotlib.pyplot as plt
import torch

if not torch.cuda.is_available():
    print("No CUDA device on this machine: nothing measured, no figure drawn.")
else:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    readings = []

    def read(step):
        readings.append((step, torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))

    read("start")
    t = torch.empty(1_000_000, dtype=torch.float32, device="cuda")  # 4,000,000 bytes
    read("empty(1e6) float32")
    del t
    read("del")
    t = torch.empty(1_000_000, dtype=torch.float32, device="cuda")
    read("again")
    del t
    torch.cuda.empty_cache()
    read("del, empty_cache()")
    for step, allocated, reserved in readings:
        print(f"{step:22s} allocated {allocated:>10,d}  reserved {reserved:>10,d}")

    # %%
    # Bytes after each step: allocated (the tensors' blocks) beside reserved (the cache).
    fig, ax = plt.subplots(figsize=(8, 3.5))
    steps = range(len(readings))
    ax.bar([s - 0.2 for s in steps], [r[1] / 2**20 for r in readings], width=0.4, label="memory_allocated()")
    ax.bar([s + 0.2 for s in steps], [r[2] / 2**20 for r in readings], width=0.4, label="memory_reserved()")
    ax.set_xticks(list(steps), [r[0] for r in readings], fontsize=8)
    ax.set_ylabel("MiB")
    ax.set_title(f"CUDA caching allocator on {torch.cuda.get_device_name()}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
