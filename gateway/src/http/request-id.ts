import { randomUUID } from "node:crypto";

/** Accept a caller's id only if it is short and printable: it is echoed in headers and written to logs. */
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && ACCEPTABLE.test(v) ? v : `req_${randomUUID().replace(/-/g, "")}`;
}
