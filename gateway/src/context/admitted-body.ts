import type { BudgetLease } from "../../limits/keyed-budget";
import type { JsonMember } from "./json-members";

/** A request body that passed admission: decoded JSON bytes, the parsed value and the memory it holds. */
export interface AdmittedBody {
  /** The JSON text as sent (content coding and BOM removed). */
  bytes: Buffer;
  json: unknown;
  /** Top-level members of `bytes`, for forwarding them unchanged. */
  members: JsonMember[];
  lease: BudgetLease;
}
