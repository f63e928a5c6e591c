/**
 * What the proofs service's tests make over and over: a proof, its history, and two changes
 * interleaved.
 */
import type { Proof, ProofHistory } from "@printshop/shared/contracts/proofs";
import type { Queryable } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import { okAs, type ServiceHarness } from "@printshop/shared/testing";
import type { Config } from "./config.ts";

/** A proof for a quote, for Sam at Riverside Bakery; `body` overrides any field. */
export async function createProof(
  h: ServiceHarness<Config>,
  org: string,
  body: Record<string, unknown> = {},
): Promise<Proof> {
  return await okAs<Proof>(h, "POST", "/v1/proofs", org, {
    quoteId: crypto.randomUUID(),
    title: "Staff tees",
    recipientName: "Sam Nguyen",
    recipientEmail: "sam@riversidebakery.com.au",
    imageUrls: ["https://files.example.com/front.png"],
    notes: "Logo as supplied",
    items: [{ description: "Gildan 5000 Black", sizes: [{ size: "M", quantity: 40 }] }],
    ...body,
  });
}

export async function historyOf(
  h: ServiceHarness<Config>,
  org: string,
  id: string,
): Promise<ProofHistory> {
  return await okAs<ProofHistory>(h, "GET", `/v1/proofs/${id}/history`, org);
}

/**
 * Runs `run` while another transaction holds what `hold` wrote or locked, and commits that
 * transaction once `run` waits on a lock (or has finished without waiting): two changes to the
 * same rows, interleaved the same way on every run, so a check made before a lock is caught.
 */
export async function whileHeld<T>(
  h: ServiceHarness<Config>,
  hold: (tx: Queryable) => Promise<unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const tx = await h.sql.reserve();
  try {
    await tx`BEGIN`;
    await hold(tx);
    let finished = false;
    const outcome = run().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ).finally(() => finished = true);
    while (!finished && !(await waitingOnLock(h))) await sleep(5);
    await tx`COMMIT`;
    const settled = await outcome;
    if ("error" in settled) throw settled.error;
    return settled.value;
  } finally {
    tx.release();
  }
}

/** Whether a statement of this database waits on a lock (the held transaction's). */
async function waitingOnLock(h: ServiceHarness<Config>): Promise<boolean> {
  const [row] = await h.sql<{ waiting: number }[]>`
    SELECT count(*)::int AS waiting FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row!.waiting > 0;
}
