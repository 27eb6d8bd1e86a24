"""Core types and helpers every layer may import: boundary models (``schema``), the one
definition of each vocabulary type (``vocab``), settings, what a question's words say
(``question``) and case plan templates (``templates``). Imports nothing of the engine."""
