"""The DeepAgent loop: the graph's nodes and wiring (``graph``), where it goes next
(``routing``), its JSON state with reducers (``state``), typed views of that state
(``views``), the coverage step, guards and event streaming."""
