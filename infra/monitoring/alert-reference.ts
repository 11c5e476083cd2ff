// The alerts' reference in docs/monitoring.md, generated from the rule definitions (`npm run docs:monitoring`): what
// each alert means in words, how long it waits, how loud it is, and its runbook line. The expressions themselves are
// in the metrics server (its /rules page) and in the definitions: the page says what to do, not how it is computed.
import type { AlertRule } from "./rule-types";

/** One entry per alert: its name, how loud and after how long, what firing means, then what to do (and where more is). */
export function alertsReference(rules: readonly AlertRule[]): string {
  const more = (r: AlertRule) => (r.runbookPage ? ` More: [${r.runbookPage.split("#")[0]}](${r.runbookPage}).` : "");
  return rules.map((r) => `- **${r.alert}** (${r.severity}, for ${r.for}): ${r.description} **Runbook:** ${r.runbook}${more(r)}`).join("\n");
}
