-- The quote list's facets name every sales rep on the organisation's quotes. A DISTINCT over the
-- quotes read them all (a parallel sequential scan: 89 ms at 100,000 quotes, 5.7 times what 10,000
-- took, in `deno task bench:scale`); walked through this index one rep at a time (salesRepFacet)
-- it reads one index entry per rep. Partial: quotes without a rep add nothing to it.
CREATE INDEX quotes_by_sales_rep ON quotes (organization_id, sales_rep_email)
  WHERE sales_rep_email IS NOT NULL;
