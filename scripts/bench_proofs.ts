/**
 * The proofs part of `deno task bench` (imported by scripts/bench.ts, run on its stack; or alone,
 * on a stack of its own, with `deno run -A scripts/bench_proofs.ts`). The stack's proofs process
 * sends through a real SMTP server in this process (`smtp-server` on loopback), so the proofs
 * process must be started with PROOFS_BENCH_PROCESS_ENV(port) of a server started first.
 *
 * 1. Send → accepted: SENDS (200) times, one after another, `POST /v1/proofs/{proofId}/send`
 *    through the gateway for a fresh proof, timed from just before the request to the moment the
 *    SMTP server has the whole message (its DATA ends). This is the outbox's whole path: the
 *    send's transaction, NOTIFY, the mail worker's claim, nodemailer's SMTP conversation.
 *    The request's own answer time is reported beside it. p50, p99, max.
 * 2. Page render: the approval page of one sent proof, `GET /approve/{token}` through the gateway,
 *    PAGE_SAMPLES times one after another after a warm-up, as many as the page's rate limit lets
 *    one link have in a minute (the first opening records the view; these measure the read and
 *    the HTML), p50 and p99, with the page's bytes; beside it
 *    `GET /v1/proofs/{proofId}` of the same proof with the shop's key (the same rows, as JSON,
 *    behind a credential) for scale.
 */
import { smtpServer } from "@printshop/shared/testing/smtp";
import { approvalPages } from "@printshop/shared/contracts/proofs";
import { writeResults } from "./bench/results.ts";
import { api, benchOrganization, startBenchStack } from "./bench/stack.ts";
import { type LatencyFigures, latencyFigures } from "./bench/stats.ts";

export const SENDS = Number(Deno.env.get("BENCH_PROOF_SENDS") ?? 200);
/**
 * Renders timed: what one link may be viewed in a minute (the page's own rate limit, which the
 * bench, one link, is held to like anyone), less the warm-up.
 */
const PAGE_WARMUP = 5;
const PAGE_SAMPLES = approvalPages.approvalPage.requestsPerMinutePerLink.GET - PAGE_WARMUP - 1;
const WARMUP = 20;
const MESSAGE_TIMEOUT_MS = 30_000;

/** The proofs process's mail server: the bench's SMTP server on `port`. */
export function proofsBenchProcessEnv(port: number): { proofs: Record<string, string> } {
  return { proofs: { SMTP_URL: `smtp://127.0.0.1:${port}?from=proofs@bench.example` } };
}

export interface ProofsReport {
  date: string;
  sendToAccepted: LatencyFigures & { requestP50Ms: number; requestP99Ms: number };
  pageRender: LatencyFigures & { bytes: number };
  proofJson: LatencyFigures & { bytes: number };
}

const figures = latencyFigures;

/** A smtp-server whose every accepted message resolves the next waiter, with its time. */
export async function startBenchSmtp(): Promise<{
  port: number;
  next(): Promise<number>;
  close(): Promise<void>;
}> {
  const waiters: ((at: number) => void)[] = [];
  const arrived: number[] = [];
  const server = await smtpServer({
    onData(stream, _session, callback) {
      stream.on("data", () => {});
      stream.on("end", () => {
        const at = performance.now();
        const waiter = waiters.shift();
        if (waiter) waiter(at);
        else arrived.push(at);
        callback();
      });
    },
  });
  return {
    port: server.port,
    next: () => {
      const ready = arrived.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no message within ${MESSAGE_TIMEOUT_MS} ms`)),
          MESSAGE_TIMEOUT_MS,
        );
        waiters.push((at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });
    },
    close: () => server.close(),
  };
}

export interface ProofsBenchOptions {
  gatewayUrl: string;
  adminUrl: string;
  adminToken: string;
  smtp: { next(): Promise<number> };
}

export async function runProofsBench(options: ProofsBenchOptions): Promise<ProofsReport> {
  const { apiKey } = await benchOrganization(options, "Proofs bench shop");
  const headers = { "x-api-key": apiKey };
  const gateway = options.gatewayUrl;
  const newProof = async (i: number): Promise<{ id: string }> =>
    await api<{ id: string }>(`${gateway}/v1/proofs`, {
      method: "POST",
      headers,
      body: {
        quoteId: crypto.randomUUID(),
        title: `Bench proof ${i}`,
        recipientName: "Bench Customer",
        recipientEmail: `customer-${i}@bench.example`,
        imageUrls: ["https://files.example.com/front.png", "https://files.example.com/back.png"],
        items: [{
          description: "Gildan 5000 Black",
          sizes: [{ size: "S", quantity: 10 }, { size: "M", quantity: 40 }, {
            size: "L",
            quantity: 20,
          }],
        }],
      },
    });

  console.error(`[bench] proofs: ${SENDS} sends, each timed until the SMTP server has it…`);
  const accepted: number[] = [];
  const answered: number[] = [];
  let lastUrl = "";
  let lastProof = "";
  for (let i = 0; i < SENDS + WARMUP; i++) {
    const proof = await newProof(i);
    const started = performance.now();
    const sent = await api<{ links: { url: string }[] }>(`${gateway}/v1/proofs/${proof.id}/send`, {
      method: "POST",
      headers,
      body: {},
    });
    const answeredAt = performance.now();
    const at = await options.smtp.next();
    if (i >= WARMUP) {
      accepted.push(at - started);
      answered.push(answeredAt - started);
    }
    lastUrl = sent.links[0]!.url;
    lastProof = proof.id;
  }

  console.error(`[bench] proofs: the approval page, ${PAGE_SAMPLES} renders…`);
  const timed = async (url: string, init: RequestInit): Promise<[number[], number]> => {
    const samples: number[] = [];
    let bytes = 0;
    for (let i = 0; i < PAGE_SAMPLES + PAGE_WARMUP; i++) {
      const started = performance.now();
      const res = await fetch(url, init);
      const body = await res.arrayBuffer();
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
      bytes = body.byteLength;
      if (i >= PAGE_WARMUP) samples.push(took);
    }
    return [samples, bytes];
  };
  const [page, pageBytes] = await timed(lastUrl, {});
  const [json, jsonBytes] = await timed(`${gateway}/v1/proofs/${lastProof}`, { headers });
  const sendFigures = figures(accepted);
  const requestFigures = figures(answered);
  return {
    date: new Date().toISOString(),
    sendToAccepted: {
      ...sendFigures,
      requestP50Ms: requestFigures.p50Ms,
      requestP99Ms: requestFigures.p99Ms,
    },
    pageRender: { ...figures(page), bytes: pageBytes },
    proofJson: { ...figures(json), bytes: jsonBytes },
  };
}

/** The proofs table of `deno task bench`. */
export function formatProofsReport(report: ProofsReport, writtenTo: string): string {
  const ms = (n: number): string => n.toFixed(1).padStart(10);
  const row = (label: string, f: LatencyFigures, extra = ""): string =>
    `${label.padEnd(52)}${ms(f.p50Ms)}${ms(f.p99Ms)}${ms(f.maxMs)}${
      String(f.samples).padStart(9)
    }` +
    extra;
  const s = report.sendToAccepted;
  return [
    "",
    "Proofs: through the gateway, one organisation; mail to a real SMTP server in the bench process",
    "",
    `${"".padEnd(52)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${"max ms".padStart(10)}${
      "samples".padStart(9)
    }`,
    row("POST …/send → message accepted by the SMTP server", s),
    row("  of which the send request itself", {
      samples: s.samples,
      p50Ms: s.requestP50Ms,
      p99Ms: s.requestP99Ms,
      maxMs: Number.NaN,
    }),
    row(
      "GET /approve/{token} (the approval page)",
      report.pageRender,
      `   ${report.pageRender.bytes} B`,
    ),
    row(
      "GET /v1/proofs/{proofId} (same proof, JSON)",
      report.proofJson,
      `   ${report.proofJson.bytes} B`,
    ),
    `Figures written to ${writtenTo}`,
  ].join("\n");
}

if (import.meta.main) {
  const smtp = await startBenchSmtp();
  const bench = await startBenchStack("printshop-bench-proofs-", {
    processEnv: proofsBenchProcessEnv(smtp.port),
  });
  try {
    const report = await runProofsBench({
      gatewayUrl: bench.stack.gatewayUrl,
      adminUrl: bench.stack.adminUrl,
      adminToken: bench.adminToken,
      smtp,
    });
    await writeResults("bench-results/proofs.json", report);
    console.log(formatProofsReport(report, "bench-results/proofs.json"));
  } finally {
    await bench.stop();
    await smtp.close();
  }
}
