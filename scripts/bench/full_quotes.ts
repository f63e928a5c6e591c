/**
 * The full quotes of the ratios part (3 groups × 4 Garment lines × 5 variants), built through
 * the API; the turns of its writers on them (a line of 5 variants added and deleted, a variant's
 * quantity changed); and the wait until the quotes outbox is published after a write load.
 */
import type { Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import type { Turn } from "./load.ts";
import { FULL_QUOTE_SHAPE } from "./quotes_shape.ts";
import { api } from "./stack.ts";

export const GROUPS = FULL_QUOTE_SHAPE.groups;
export const LINES_PER_GROUP = FULL_QUOTE_SHAPE.linesPerGroup;
export const VARIANTS_PER_LINE = FULL_QUOTE_SHAPE.variantsPerLine;
const OUTBOX_DRAIN_TIMEOUT_MS = 120_000;

/** The body of the l-th Garment line of group g, as the full quotes are built and the writers add. */
export function lineBody(g: number, l: number): Record<string, unknown> {
  return {
    lineType: "Garment",
    productName: `Heavy cotton tee ${g}.${l}`,
    productSku: `G500${l}`,
    title: "Staff tee",
    description: "Black, unisex fit",
  };
}

/** The v-th variant (from 0) of a line: sizes S to 2XL, quantity 6 + v, a manual 40 % markup. */
function variantBody(v: number): Record<string, unknown> {
  return {
    size: ["S", "M", "L", "XL", "2XL"][v % 5],
    colour: "Black",
    quantity: 6 + v,
    buyPrice: 6.25,
    extraCost: 0.5,
    markupType: "percentage",
    markupValue: 40,
  };
}

export interface FullQuote {
  id: string;
  /** The quote as GET /v1/quotes/{id} answered it, right after it was built. */
  json: string;
  groupIds: string[];
  variants: { id: string; quantity: number }[];
}

/** A quote of GROUPS groups × LINES_PER_GROUP Garment lines × VARIANTS_PER_LINE variants. */
export async function buildFullQuote(
  gatewayUrl: string,
  headers: Record<string, string>,
  reference = "Ratios full quote",
): Promise<FullQuote> {
  const quote = await api<{ id: string }>(`${gatewayUrl}/v1/quotes`, {
    method: "POST",
    headers,
    body: { reference, salesRepEmail: "rep@bench.test" },
  });
  const groupIds: string[] = [];
  const variants: FullQuote["variants"] = [];
  for (let g = 1; g <= GROUPS; g++) {
    const group = await api<{ id: string }>(`${gatewayUrl}/v1/quotes/${quote.id}/groups`, {
      method: "POST",
      headers,
      body: { name: `Group ${g}` },
    });
    groupIds.push(group.id);
    for (let l = 1; l <= LINES_PER_GROUP; l++) {
      const line = await api<{ id: string }>(`${gatewayUrl}/v1/quote-groups/${group.id}/lines`, {
        method: "POST",
        headers,
        body: lineBody(g, l),
      });
      for (let v = 0; v < VARIANTS_PER_LINE; v++) {
        const body = variantBody(v);
        const variant = await api<{ id: string }>(
          `${gatewayUrl}/v1/quote-lines/${line.id}/variants`,
          { method: "POST", headers, body },
        );
        variants.push({ id: variant.id, quantity: body.quantity as number });
      }
    }
  }
  const res = await fetch(`${gatewayUrl}/v1/quotes/${quote.id}`, { headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /v1/quotes/${quote.id} answered ${res.status}: ${text}`);
  const json = JSON.stringify((JSON.parse(text) as { data: unknown }).data);
  return { id: quote.id, json, groupIds, variants };
}

/** Where a writer sends its turns: the gateway, with its key's headers. */
export interface WriterApi {
  gatewayUrl: string;
  headers: Record<string, string>;
}

/**
 * The line writers' turn on their own quote: a line into the next group (in rotation), its
 * VARIANTS_PER_LINE variants one by one, then the line deleted, so the quote keeps its shape.
 */
export function lineWriter(writer: WriterApi, quote: FullQuote): Turn {
  const { gatewayUrl, headers } = writer;
  let turn = 0;
  return async (send) => {
    const g = turn++ % quote.groupIds.length;
    const created = await send("line", {
      url: `${gatewayUrl}/v1/quote-groups/${quote.groupIds[g]}/lines`,
      method: "POST",
      headers,
      body: JSON.stringify(lineBody(g + 1, LINES_PER_GROUP + 1)),
      expectStatus: 201,
      read: true,
    });
    if (created === null) return;
    const lineId = (JSON.parse(created) as { data: { id: string } }).data.id;
    for (let v = 0; v < VARIANTS_PER_LINE; v++) {
      await send("variant", {
        url: `${gatewayUrl}/v1/quote-lines/${lineId}/variants`,
        method: "POST",
        headers,
        body: JSON.stringify(variantBody(v)),
        expectStatus: 201,
      });
    }
    await send("delete", {
      url: `${gatewayUrl}/v1/quote-lines/${lineId}`,
      method: "DELETE",
      headers,
      expectStatus: 200,
    });
  };
}

/**
 * The PATCH writers' turn on their own quote: the next of its variants (in order, round after
 * round) to its built quantity + 1 on even rounds and back on odd ones, so every PATCH changes it.
 */
export function variantPatcher(writer: WriterApi, quote: FullQuote): Turn {
  const { gatewayUrl, headers } = writer;
  let turn = 0;
  return async (send) => {
    const k = turn % quote.variants.length;
    const round = Math.floor(turn / quote.variants.length);
    turn++;
    const variant = quote.variants[k]!;
    await send("patch", {
      url: `${gatewayUrl}/v1/quote-variants/${variant.id}`,
      method: "PATCH",
      headers,
      body: JSON.stringify({ quantity: variant.quantity + (round % 2 === 0 ? 1 : 0) }),
      expectStatus: 200,
    });
  };
}

/**
 * Waits until the quotes outbox holds nothing unpublished (quarantined rows aside); answers the
 * seconds it took, or null past the timeout.
 */
export async function waitOutboxDrained(sql: Sql): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < OUTBOX_DRAIN_TIMEOUT_MS) {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM quotes.outbox
      WHERE published_at IS NULL AND quarantined_at IS NULL`;
    if (row!.n === 0) return (performance.now() - started) / 1000;
    await sleep(250);
  }
  return null;
}
