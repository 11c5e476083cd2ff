import type { Priority } from "../../context/api-key-record";

/** Whom a waiting request is served for: an API key, with the priority and weight of its entry. */
export interface Tenant {
  readonly name: string;
  readonly priority: Priority;
  /** Its share of a busy model's slots relative to other keys' (1 unless its entry says otherwise). */
  readonly weight: number;
}

/** Requests that name no key (internal callers): interactive, weight 1. */
export const ANONYMOUS: Tenant = { name: "", priority: "interactive", weight: 1 };

/** A key's entry as a tenant: interactive and weight 1 unless it says otherwise. */
export function tenantOf(key: { name: string; priority?: Priority; weight?: number }): Tenant {
  return key.priority !== undefined && key.weight !== undefined ? (key as Tenant) : { name: key.name, priority: key.priority ?? "interactive", weight: key.weight ?? 1 };
}

export function band(tenant: Tenant): number {
  return tenant.priority === "batch" ? 1 : 0;
}
