// Per-key budgets and the usage ledger: a warning when a key nears or spends a budget (the platform team tells the
// key's team; nothing is broken), and a page when a gateway pod cannot write its usage ledger (billing data).
//
// Budgets: every gateway pod exports each budgeted key's limit and what it last read as used from the shared store,
// so pods differ only by how recent their read is: the newest, the largest, counts (max across pods). A new period
// starts at 0 used, which resolves both alerts.
//
// The ledger: each pod keeps its counts in memory and writes them every 10 s by default. Counts pending while no
// write succeeds are safe as long as the pod lives; a rollout, a scale-down or an eviction then loses them for good.
// Pending counts without a successful write catch a store that refuses and one that hangs (no write ends at all).
import type { AlertRule } from "./rule-types";

/** Shares of a budget (used / limit) at which a key is warned about, then has spent it. */
export const BUDGET_THRESHOLDS = { nearlySpent: 0.8, spent: 1 } as const;

/** Where the procedures are: what a key's clients see over budget, and the ledger's operations. */
export const BUDGETS_PAGE = "gateway-api.md#budgets";
export const LEDGER_PAGE = "operations.md#the-usage-ledger";

/** Used over limit per gateway namespace, key, resource and period: the newest read of any pod. */
export const BUDGET_SHARE =
  "max by (namespace, key, resource, period) (gateway_key_budget_used) / max by (namespace, key, resource, period) (gateway_key_budget_limit)";

const BUDGET_RUNBOOK = "Tell the key's team (AI Platform · Gateway, Budget used by key); for more, raise its `budget` in `gateway:apiKeys`, `pulumi up`.";

export const USAGE_RULES: readonly AlertRule[] = [
  {
    alert: "KeyBudgetNearlySpent",
    // 5 minutes: a request's reservation counts as used until it settles with the real count.
    expr: `${BUDGET_SHARE} >= ${BUDGET_THRESHOLDS.nearlySpent} < ${BUDGET_THRESHOLDS.spent}`,
    for: "5m",
    severity: "warning",
    summary: "Key {{ $labels.key }} has used over 80% of its {{ $labels.resource }} budget for this {{ $labels.period }}.",
    description: "A key has used 80% of a budget (per UTC day or month); a new period resolves it.",
    runbook: BUDGET_RUNBOOK,
    runbookPage: BUDGETS_PAGE,
  },
  {
    alert: "KeyBudgetSpent",
    expr: `${BUDGET_SHARE} >= ${BUDGET_THRESHOLDS.spent}`,
    for: "5m",
    severity: "warning",
    summary: "Key {{ $labels.key }} has spent its {{ $labels.resource }} budget for this {{ $labels.period }}: its requests get 429 budget_exceeded.",
    description: "All of a budget used: 429 `budget_exceeded` until the period resets (which resolves it).",
    runbook: BUDGET_RUNBOOK,
    runbookPage: BUDGETS_PAGE,
  },
  {
    alert: "UsageLedgerWritesFailing",
    expr:
      "max by (namespace, pod) (gateway_usage_ledger_pending_objects) > 0" +
      ' unless on (namespace, pod) max by (namespace, pod) (increase(gateway_usage_ledger_writes_total{outcome="success"}[5m])) > 0',
    for: "10m",
    severity: "critical",
    summary: "Gateway pod {{ $labels.pod }} has written no usage-ledger object for 15 minutes: {{ $value }} hour(s) of counts exist only in its memory.",
    description:
      "A gateway pod's usage counts wait unwritten for 15 minutes. It pages: the ledger is billing data, and a pod that ends (rollout, scale-down, eviction) loses them.",
    runbook:
      "Fix the store before restarting or scaling down the gateway: `kubectl -n <gateway namespace> logs <pod>` names its error (credentials, the prefix's permission, no bucket, egress). The pod retries by itself.",
    runbookPage: LEDGER_PAGE,
  },
];
