"""Skills: business analysis guidance and rules, one SKILL.md per business module."""
