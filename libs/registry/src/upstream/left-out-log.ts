import type { LeftOutItem } from './upstream-contribution';

/** How many left-out entries of one list a pull logs one by one; the rest get one count line. */
export const LEFT_OUT_LOGGED_PER_LIST = 5;

/**
 * The log lines for the entries one pull (or one live fetch) left out: the first few of each
 * list one by one, then one line with how many more of that list were left out. An upstream
 * that answers 100,000 invalid entries costs a handful of lines, not 100,000; the status
 * endpoint keeps the full `leftOut` (docs/operations.md "Upstream MCP servers", Checks).
 *
 * @param prefix what each line starts with, e.g. `Upstream calc: ` or `Upstream calc: live `
 */
export function leftOutLogLines(
  prefix: string,
  leftOut: readonly LeftOutItem[],
  perList = LEFT_OUT_LOGGED_PER_LIST,
): string[] {
  const lines: string[] = [];
  const counts = new Map<LeftOutItem['list'], number>();
  for (const item of leftOut) {
    const seen = (counts.get(item.list) ?? 0) + 1;
    counts.set(item.list, seen);
    if (seen <= perList)
      lines.push(`${prefix}${item.list} entry "${item.name}" left out: ${item.reason}`);
  }
  for (const [list, count] of counts)
    if (count > perList)
      lines.push(
        `${prefix}${count - perList} more ${list} entries left out (${count} in all; the first ${perList} are logged)`,
      );
  return lines;
}
