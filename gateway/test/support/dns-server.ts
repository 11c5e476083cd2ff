import dns2 from "dns2";

const { Packet } = dns2;

export interface LoopbackDns {
  port: number;
  close(): Promise<void>;
}

/**
 * An authoritative DNS server on loopback for test names: names in `records` answer A, `failing` ones SERVFAIL, the
 * rest NXDOMAIN, as Kubernetes' DNS answers for a headless Service with ready pods, broken, or with none.
 */
export async function startDnsServer(records: Map<string, string[]>, failing: Set<string> = new Set()): Promise<LoopbackDns> {
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const [question] = request.questions;
      if (question && failing.has(question.name.toLowerCase())) {
        send(Packet.createErrorResponseFromRequest(request, 2));
        return;
      }
      const addresses = question ? records.get(question.name.toLowerCase()) : undefined;
      if (!question || !addresses) {
        send(Packet.createErrorResponseFromRequest(request, 3));
        return;
      }
      const response = Packet.createResponseFromRequest(request);
      if (question.type === Packet.TYPE.A) {
        for (const address of addresses) response.answers.push(Packet.createResourceFromQuestion(question, { ttl: 1, address }));
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  if (!addresses.udp) throw new Error("the DNS server did not listen on UDP");
  return { port: addresses.udp.port, close: () => server.close() };
}
