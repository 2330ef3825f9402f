"""`%grad_device`'s room, the inventory: every tensor a namespace holds and the device it lives on.

- report.py: the data model (`DeviceOptions`, `DeviceReport` of `TensorRow`s, totals, warnings, skipped
  objects) -- strings and numbers, never a live tensor, never a renderer;
- walk.py: the breadth-first walk from the names to every tensor they reach (metadata only);
- warnings.py: what the walk found that will fail or waste memory, one sentence each;
- build.py: `build_report`, the walk's phases, totals and warnings put together.

Sentences come from the catalog (keys `inventory.*`) in the report's language. Rendering lives in
`grad_magic.render.inventory`; the magic (`device_magic.py`) joins the two. Import from the defining modules.
"""
