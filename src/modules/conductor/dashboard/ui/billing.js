// Billing: the wallet, this month's spend against the cap (admins set it), and buying credit through checkout.
import { api, ErrorNote, fmtDate, fmtUsd, html, Loading, Page, useAction, useLoad, useState } from './lib.js';

export function Billing() {
  const wallet = useLoad(() => api('/billing/wallet'), []);
  const cap = useLoad(() => api('/spend-cap'), []);
  const capAction = useAction();
  const buy = useAction();
  const [savedCap, setSavedCap] = useState(false);
  const [capInput, setCapInput] = useState(undefined); // what the user typed; undefined: the saved cap
  const setCap = (e) => {
    e.preventDefault();
    const raw = String(capInput ?? shownCap()).trim();
    capAction.run(async () => {
      const limit = raw === '' ? null : Math.round(Number(raw) * 100);
      if (limit !== null && !Number.isFinite(limit)) throw new Error('Monthly cap: enter an amount in USD, or leave it empty for no cap');
      await api('/spend-cap', { method: 'PUT', body: { limit_usd_cents: limit } });
      setSavedCap(true);
      setCapInput(undefined);
      cap.reload();
    });
  };
  const checkout = (cents) => buy.run(async () => {
    const session = await api('/billing/checkout', { method: 'POST', body: { cents } });
    if (session?.url) location.assign(session.url);
  });
  const w = wallet.data;
  // 503: the server runs without a billing client (SVC_BILLING=off): no wallet to show, which is not an error
  const unbilled = wallet.error?.status === 503;
  const m = cap.data?.month;
  const shownCap = () => (m?.user_set && m.limit_usd !== null ? String(m.limit_usd) : '');
  return html`<${Page} title="Billing">
    <${ErrorNote} error=${(unbilled ? undefined : wallet.error) ?? cap.error} />
    ${wallet.loading && !w ? html`<${Loading} />` : null}
    <div class="cards">
      ${w ? html`<div class="card" data-testid="wallet"><h2>Wallet</h2><p class="big" data-testid="balance">${fmtUsd(w.balanceUSD)}</p>
        <p class="muted">${w.configured ? 'Prepaid credit left.' : 'No credit has been granted yet.'}${w.plan ? ` Plan: ${w.plan.name} (${w.plan.status}).` : ''}</p>
        <p class="muted">Machine time this period: ${Math.round(w.machineTime.usedSeconds / 60)} min${w.machineTime.includedSeconds === null ? '' : ` of ${Math.round(w.machineTime.includedSeconds / 60)}`}.</p></div>` : null}
      ${unbilled ? html`<div class="card" data-testid="wallet"><h2>Wallet</h2><p class="muted">${wallet.error.message}</p></div>` : null}
      ${m ? html`<div class="card"><h2>This month</h2><p class="big">${fmtUsd(m.spent_usd)}</p>
        <p class="muted">${m.limit_usd === null ? 'No monthly cap.' : `of a ${fmtUsd(m.limit_usd)} cap (${fmtUsd((m.remaining_usd_cents ?? 0) / 100)} left)`}; resets ${fmtDate(m.resets_at)}.</p></div>` : null}
    </div>
    ${cap.data
      ? html`<h2>Monthly spend cap</h2>
        <form class="inline-form" onSubmit=${setCap}>
          <label for="cap">Cap in USD</label><input id="cap" name="limit" type="number" min="0" step="0.01" inputmode="decimal" value=${capInput ?? shownCap()}
            onInput=${(e) => (setCapInput(e.currentTarget.value), setSavedCap(false))} placeholder="no cap" />
          <button type="submit" disabled=${capAction.busy}>Save cap</button>${savedCap ? html`<span class="ok" role="status">Saved.</span>` : null}
        </form><p class="muted">Setting the cap needs role admin or owner.</p><${ErrorNote} error=${capAction.error} />`
      : null}
    ${w?.packs?.length
      ? html`<h2>Buy credit</h2><div class="row">${w.packs.map((p) => html`<button type="button" class="secondary" disabled=${buy.busy} onClick=${() => checkout(p.cents)}>Add ${fmtUsd(p.usd)}</button>`)}</div>
        <p class="muted">Checkout opens the payment page; it needs role admin or owner.</p><${ErrorNote} error=${buy.error} />`
      : null}
  </${Page}>`;
}
