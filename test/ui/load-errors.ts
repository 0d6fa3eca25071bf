/**
 * Pairs Chromium's console line for an error answer ("Failed to load resource: the server
 * responded with a status of 422") with the response event of the same URL and status. Chromium
 * logs every 4xx/5xx answer, and the line may reach us before or after Playwright's response
 * event (which can wait for the response's extra-info headers): pairing by URL, in either order,
 * and waiting for the missing half before asserting, makes an allowed answer never a console error.
 */
import { waitFor } from '../helpers/wait.ts';

const FAILED_LOAD = /^Failed to load resource: the server responded with a status of (\d+)/;

interface Answer {
  url: string;
  status: number;
  allowed: boolean;
}

interface Line {
  text: string;
  /** The resource's URL (Chromium's log entry carries it as its location); '' if absent. */
  url: string;
  status: number;
}

const pairs = (answer: Answer, line: Line): boolean =>
  answer.status === line.status && (line.url === '' || line.url === answer.url);

export class LoadErrorLog {
  /** Error answers whose console line has not come (yet, or at all: not every answer is logged). */
  private readonly answers: Answer[] = [];
  /** Console lines whose response event has not come yet. */
  private lines: Line[] = [];

  /** `report` receives the text of a line whose answer was not allowed (or never seen). */
  constructor(private readonly report: (text: string) => void) {}

  /** Takes a console error; false when it is not a failed load (the caller reports it as it is). */
  consoleLine(text: string, url: string): boolean {
    const match = FAILED_LOAD.exec(text);
    if (!match) return false;
    const line = { text, url, status: Number(match[1]) };
    const index = this.answers.findIndex((answer) => pairs(answer, line));
    if (index >= 0) this.settle(line, this.answers.splice(index, 1)[0]);
    else this.lines.push(line);
    return true;
  }

  /** Takes an error answer (status ≥ 400) and whether the test allowed it. */
  response(url: string, status: number, allowed: boolean): void {
    const answer = { url, status, allowed };
    const index = this.lines.findIndex((line) => pairs(answer, line));
    if (index >= 0) this.settle(this.lines.splice(index, 1)[0], answer);
    else this.answers.push(answer);
  }

  private settle(line: Line, answer: Answer): void {
    if (!answer.allowed) this.report(line.text);
  }

  /**
   * Waits until every failed-load line has its response event; one that never gets it (within
   * the tests' wait deadline) is reported with its URL.
   */
  async settled(): Promise<void> {
    if (this.lines.length === 0) return;
    await waitFor(() => this.lines.length === 0, 100).catch(() => {
      for (const line of this.lines) this.report(`${line.text} (${line.url}; no response event)`);
      this.lines = [];
    });
  }

  /** Forgets the lines seen so far (answers stay: the line of one may still come). */
  clear(): void {
    this.lines = [];
  }
}
