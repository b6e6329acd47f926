"""Links between pages: which file a reference names (``references``), resolving a plan's link
candidates to elements (``resolve``), the relationship types written for them (``types``) and
what the links say about the pages they point at (``anchor_text``)."""
