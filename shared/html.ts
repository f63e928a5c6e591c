/**
 * HTML written by the platform (the proof email, the approval page, the gateway's page errors):
 * Hono's `html` template escapes every interpolated value unless it is itself `Html`, so text a
 * shop or a customer typed can never become markup. Arrays are joined; null, undefined and false
 * print nothing (for conditional parts).
 */
import { html as honoHtml, raw as honoRaw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

export type Html = HtmlEscapedString;

/** Escaping template, synchronous (no value here is ever a promise). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const out = honoHtml(strings, ...values);
  if (out instanceof Promise) throw new TypeError("html`…` was given a promise");
  return out;
}

/** Text that is markup already (a constant style sheet): printed as it is, never escaped. */
export function trusted(markup: string): Html {
  return honoRaw(markup);
}
