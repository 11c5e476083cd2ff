import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Gauge, type Registry } from "prom-client";
import type { Logger } from "./logger";

export const TLS_CERT_EXPIRY_METRIC = "gateway_tls_certificate_expiry_timestamp_seconds";

/** How often the file is read again: the kubelet updates a mounted Secret within about a minute. */
export const TLS_CERT_REREAD_MS = 60_000;

/**
 * The expiry of the certificate the operator provides (a mounted `tls.crt`), as a gauge the CertificateExpiringSoon
 * alert reads: cert-manager's metrics cover only the certificates it issues. The gauge is absent while the file is
 * missing or unparsable (an unlabelled prom-client gauge would show 0, an expiry in 1970, so it is unregistered).
 * Each change of state is logged once, not every read.
 */
export class TlsCertificateExpiry {
  private readonly gauge = new Gauge({
    name: TLS_CERT_EXPIRY_METRIC,
    help: "When the TLS certificate the operator provides (GATEWAY_TLS_CERT_FILE, the leaf of a chain) expires, seconds since the epoch; absent while the file is missing or unparsable.",
    registers: [],
  });
  private registered = false;
  private lastState: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly intervalMs = TLS_CERT_REREAD_MS,
  ) {}

  /** Reads once, then again every interval; never throws. */
  async start(): Promise<void> {
    await this.read();
    this.timer = setInterval(() => void this.read(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async read(): Promise<void> {
    let expiry: number;
    try {
      // X509Certificate parses the first PEM block: the leaf, in a chain as Secrets hold it.
      expiry = new X509Certificate(await readFile(this.path)).validToDate.getTime() / 1000;
    } catch (err) {
      this.absent(err as Error);
      return;
    }
    this.gauge.set(expiry);
    if (!this.registered) this.registry.registerMetric(this.gauge);
    this.registered = true;
    this.changed(`ok ${expiry}`, () => this.log.info({ path: this.path, notAfter: new Date(expiry * 1000).toISOString() }, "TLS certificate read"));
  }

  private absent(err: Error & { code?: string }): void {
    if (this.registered) this.registry.removeSingleMetric(TLS_CERT_EXPIRY_METRIC);
    this.registered = false;
    const reason = err.code ?? err.message;
    this.changed(`error ${reason}`, () => this.log.warn({ path: this.path, err: err.message }, "TLS certificate unreadable or not a certificate: its expiry is not exported"));
  }

  private changed(state: string, report: () => void): void {
    if (state !== this.lastState) report();
    this.lastState = state;
  }
}
