import type { SignInsPerDay } from '../../wire/admin/admin.schemas';
import { pageEnv } from '../env';

/** One UTC day of the overview's chart: the wire shape of GET /api/admin/summary/sign-ins. */
export type SignInDay = SignInsPerDay['days'][number];

/**
 * Sign-ins and failed sign-ins per day as an SVG bar chart made on the server (no script). It is an image with a
 * summary label; the same numbers are in the table beside it (the text alternative).
 */
export function SignInChart(props: { days: SignInDay[]; labelledBy: string }) {
  const width = 720;
  const height = 220;
  const left = 36;
  const bottom = 24;
  const top = 10;
  const max = Math.max(1, ...props.days.map((d) => Math.max(d.succeeded, d.failed)));
  const slot = (width - left) / Math.max(1, props.days.length);
  const bar = Math.max(2, slot / 2 - 2);
  const y = (n: number) => top + (height - top - bottom) * (1 - n / max);
  const total = props.days.reduce((a, d) => a + d.succeeded, 0);
  const failed = props.days.reduce((a, d) => a + d.failed, 0);
  const { locale, t } = pageEnv();
  const o = t.console.overview;
  const number = new Intl.NumberFormat(locale);
  // An axis label is a day of the month in the page's language ("11/26", "26.11."); the table keeps ISO dates.
  const dayLabel = new Intl.DateTimeFormat(locale, { month: '2-digit', day: '2-digit', timeZone: 'UTC' });
  return (
    <div class="chart">
      <ul class="legend" aria-hidden="true">
        <li>
          <span class="swatch succeeded" />
          {o.signIns}
        </li>
        <li>
          <span class="swatch failed" />
          {o.failedSignIns}
        </li>
      </ul>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={props.labelledBy} aria-describedby="chart-summary">
        <line class="axis" x1={left} y1={height - bottom} x2={width} y2={height - bottom} />
        <line class="axis" x1={left} y1={top} x2={left} y2={height - bottom} />
        <text x={left - 4} y={top + 8} text-anchor="end">
          {number.format(max)}
        </text>
        <text x={left - 4} y={height - bottom} text-anchor="end">
          0
        </text>
        {props.days.map((d, i) => {
          const x = left + i * slot + 1;
          return (
            <g>
              <rect class="succeeded" x={x} y={y(d.succeeded)} width={bar} height={height - bottom - y(d.succeeded)} />
              <rect class="failed" x={x + bar + 1} y={y(d.failed)} width={bar} height={height - bottom - y(d.failed)} />
              {i % 7 === 0 || (i === props.days.length - 1 && i % 7 >= 4) ? (
                <text x={x} y={height - 6}>
                  {dayLabel.format(new Date(`${d.day}T00:00:00Z`))}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <p id="chart-summary" class="muted">
        {o.summary(total, failed, props.days.length)}
      </p>
    </div>
  );
}
