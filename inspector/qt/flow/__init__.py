"""A pipeline of stages in the window: the question and its LiveFlow answered through jobs
(session), the collapsible stage list, its sliders, bar and detail, and the switch between it
and the fixed pipeline (flow_mode)."""
