/** The CRM service's contract: it serves no operations yet, only its health check. */
import { serviceContract } from "../operation.ts";

export const crmContract = serviceContract("crm", {});

export const crmEvents = {};
