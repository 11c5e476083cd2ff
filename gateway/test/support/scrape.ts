/**
 * The sum of every sample of a counter or gauge on a /metrics page (all label sets): what a test asks of a model
 * server's or a gateway's own figures. 0 when the page has no such series.
 */
export async function scrapedSum(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return text
    .split("\n")
    .filter((l) => l === name || l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}
