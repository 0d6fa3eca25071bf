/** What a sender gets and reports (API.md §4.21 delivery). */
import type { Severity } from '../schemas.ts';

/** One message as a receiver gets it. */
export interface OutgoingMessage {
  id: string;
  category: string;
  severity: Severity;
  title: string;
  body: string;
  /** When the notification was raised (ISO-8601). */
  at: string;
}

/** Sends one message through one channel; rejects with an Error whose message says why (not yet scrubbed). */
export type Send = (message: OutgoingMessage, signal: AbortSignal) => Promise<void>;
