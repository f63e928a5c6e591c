/** The catalogue service's contract: it serves no operations yet, only its health check. */
import { serviceContract } from "../operation.ts";

export const catalogueContract = serviceContract("catalogue", {});

export const catalogueEvents = {};
