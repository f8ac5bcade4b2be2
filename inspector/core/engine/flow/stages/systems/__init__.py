"""The stage kinds one memory system alone runs (Agno, CrewAI, LangChain, Generative Agents,
the OpenClaw memory plugin); the docs engine's are in openclaw_docs, the generic ones beside."""
