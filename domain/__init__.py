"""The pure domain of Ameide Memory: elements, versions, proposals, baselines and their rules.

Nothing here imports a framework or does I/O; persistence is mapped from outside (``storage``)
and use cases live in ``service``.
"""
