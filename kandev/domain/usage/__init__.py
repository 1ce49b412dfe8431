"""Usage and cost: what each turn cost, totals, and the budgets of tasks and automations."""
