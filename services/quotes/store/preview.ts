/**
 * The pricing preview's reads: what a tree is priced with (the organisation's markup groups and
 * the tax rate it names or its default), in one round trip. Nothing is written, not even the
 * default GST rate a first quote would create.
 */
import { read, type Sql } from "@printshop/shared/db";
import type { PreviewQuoteBody, QuotePreview } from "@printshop/shared/contracts/quotes";
import { invalid } from "@printshop/shared/http";
import { previewQuote } from "../domain/preview.ts";
import { markupGroupsForPricing } from "./markup_groups.ts";
import { DEFAULT_TAX_RATE, findDefaultTaxRate, findTaxRate, unknownTaxRate } from "./tax_rates.ts";

export async function previewQuoteTree(
  sql: Sql,
  organizationId: string,
  body: PreviewQuoteBody,
): Promise<QuotePreview> {
  const [markupGroups, rate] = await read(sql, (q) =>
    Promise.all([
      markupGroupsForPricing(q, organizationId),
      body.taxRateId
        ? findTaxRate(q, organizationId, body.taxRateId)
        : findDefaultTaxRate(q, organizationId),
    ]));
  if (body.taxRateId && !rate) throw unknownTaxRate(body.taxRateId);
  const outcome = previewQuote(
    body,
    markupGroups,
    rate ?? { id: null, name: DEFAULT_TAX_RATE.name, ratePct: DEFAULT_TAX_RATE.ratePct },
  );
  if (!outcome.ok) throw invalid("request body", [outcome.problem]);
  return outcome.preview;
}
