// The dashboards' reference in docs/monitoring.md, generated from their definitions (`npm run docs:monitoring`): one
// section per dashboard, every panel with the description Grafana shows on it, so the page cannot drift from the
// dashboards. The queries are not repeated here: each panel shows its own (Edit, or Explore).
import type { Dashboard, Panel, Variable } from "./model";

const SOURCE = { logstore: "Log store", metrics: "Metrics server" } as const;

function code(text: string): string {
  return `\`${text}\``;
}

/** "a", "a and b", "a, b and c". */
function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function variables(vars: readonly Variable[]): string {
  if (vars.length === 0) return "no variables";
  const names = list(vars.map((v) => code(`$${v.name}`)));
  // label_values(<selector>, <label>): the label each variable lists.
  const labels = list(vars.map((v) => code(/, ([^,()]+)\)$/.exec(v.definition)?.[1] ?? v.name)));
  return `${vars.length === 1 ? "variable" : "variables"} ${names} (values of ${labels})`;
}

function titled(panel: Panel): string {
  return `**${panel.title}**${panel.type === "timeseries" || panel.type === "row" ? "" : ` (${panel.type})`}`;
}

/**
 * The panels of one row (or of the top, before any row): those with a description one per line, the others, whose
 * title says it all, on one line.
 */
function panelLines(panels: readonly Panel[], indent: string): string[] {
  // Panels that share a description (the two GPU panels) share its line.
  const byText = new Map<string, Panel[]>();
  for (const p of panels) if (p.description) byText.set(p.description, [...(byText.get(p.description) ?? []), p]);
  const described = [...byText].map(([text, same]) => `${indent}- ${list(same.map(titled))}: ${text.replace(/\.?$/, ".")}`);
  const plain = panels.filter((p) => !p.description).map(titled);
  return plain.length === 0 ? described : [...described, `${indent}- ${list(plain)}.`];
}

/** One dashboard's section: source, uid, variables and purpose, then its panels (rows with their panels nested). */
export function dashboardSection(d: Dashboard): string {
  const out = [`### ${d.title}`, "", `${SOURCE[d.datasourceKind]}; uid ${code(d.uid)}; ${variables(d.templating.list)}. ${d.description}`, ""];
  // Grafana's rows are flat: a row owns the panels after it, up to the next row.
  const groups: { row?: Panel; panels: Panel[] }[] = [{ panels: [] }];
  for (const p of d.panels) {
    if (p.type === "row") groups.push({ row: p, panels: [] });
    else groups.at(-1)!.panels.push(p);
  }
  for (const g of groups) {
    if (!g.row) {
      out.push(...panelLines(g.panels, ""));
      continue;
    }
    const repeat = g.row.repeat ? `, repeated per ${code(`$${g.row.repeat}`)}` : "";
    out.push(`- **${g.row.title}** (row${repeat})${g.row.description ? `: ${g.row.description}` : ""}`, ...panelLines(g.panels, "  "));
  }
  return out.join("\n");
}

/** Every dashboard's section, in the order given. */
export function dashboardsReference(dashboards: readonly Dashboard[]): string {
  return dashboards.map(dashboardSection).join("\n\n");
}
