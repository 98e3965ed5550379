// The dashboard shell: navigation, who is signed in, sign-out, and the page for the current path.
import { csrfToken, html, Link, render, timeZone, useLoad, useLocation, whoami } from './lib.js';
import { RunDetail, Runs } from './runs.js';
import { Playground } from './playground.js';
import { Overview } from './overview.js';
import { SessionDetail, Sessions } from './sessions.js';
import { ProfileEdit, Profiles } from './profiles.js';
import { Keys } from './keys.js';
import { Billing } from './billing.js';
import { Published } from './published.js';
import { Automations, AutomationDetail } from './automations.js';
import { WorkflowDetail, Workflows } from './workflows.js';
import { MemoryStore, MemoryStores } from './memory.js';
import { WebhookDetail, Webhooks } from './webhooks.js';
import { Approvals, PendingBadge } from './approvals.js';

const NAV = [
  ['/dashboard', 'Overview'],
  ['/dashboard/runs', 'Runs'],
  ['/dashboard/approvals', 'Approvals'],
  ['/dashboard/sessions', 'Sessions'],
  ['/dashboard/playground', 'Playground'],
  ['/dashboard/profiles', 'Profiles'],
  ['/dashboard/published', 'Published agents'],
  ['/dashboard/automations', 'Automations'],
  ['/dashboard/workflows', 'Workflows'],
  ['/dashboard/memory', 'Memory'],
  ['/dashboard/webhooks', 'Webhooks'],
  ['/dashboard/keys', 'Keys'],
  ['/dashboard/billing', 'Billing'],
];

const ROUTES = [
  [/^\/dashboard\/?$/, () => html`<${Overview} />`],
  [/^\/dashboard\/runs\/?$/, () => html`<${Runs} />`],
  [/^\/dashboard\/runs\/([^/]+)$/, (id) => html`<${RunDetail} id=${id} />`],
  [/^\/dashboard\/approvals\/?$/, () => html`<${Approvals} />`],
  [/^\/dashboard\/sessions\/?$/, () => html`<${Sessions} />`],
  [/^\/dashboard\/sessions\/([^/]+)$/, (id) => html`<${SessionDetail} id=${id} />`],
  [/^\/dashboard\/playground\/?$/, () => html`<${Playground} />`],
  [/^\/dashboard\/profiles\/?$/, () => html`<${Profiles} />`],
  [/^\/dashboard\/profiles\/new$/, () => html`<${ProfileEdit} />`],
  [/^\/dashboard\/profiles\/([^/]+)$/, (name) => html`<${ProfileEdit} name=${name} />`],
  [/^\/dashboard\/published\/?$/, () => html`<${Published} />`],
  [/^\/dashboard\/automations\/?$/, () => html`<${Automations} />`],
  [/^\/dashboard\/automations\/([^/]+)$/, (id) => html`<${AutomationDetail} id=${id} />`],
  [/^\/dashboard\/workflows\/?$/, () => html`<${Workflows} />`],
  [/^\/dashboard\/workflows\/([^/]+)$/, (id) => html`<${WorkflowDetail} id=${id} />`],
  [/^\/dashboard\/memory\/?$/, () => html`<${MemoryStores} />`],
  [/^\/dashboard\/memory\/([^/]+)$/, (name) => html`<${MemoryStore} name=${name} />`],
  [/^\/dashboard\/webhooks\/?$/, () => html`<${Webhooks} />`],
  [/^\/dashboard\/webhooks\/([^/]+)$/, (id) => html`<${WebhookDetail} id=${id} />`],
  [/^\/dashboard\/keys\/?$/, () => html`<${Keys} />`],
  [/^\/dashboard\/billing\/?$/, () => html`<${Billing} />`],
];

function current(path) {
  for (const [pattern, view] of ROUTES) {
    const m = pattern.exec(path);
    if (m) return view(...m.slice(1).map(decodeURIComponent));
  }
  return html`<section class="page"><h1>Not found</h1><p>No dashboard page at <code>${path}</code>. <${Link} href="/dashboard">Overview</${Link}></p></section>`;
}

function App() {
  const loc = useLocation();
  const path = loc.split('?')[0];
  const who = useLoad(whoami, []);
  const section = NAV.filter(([href]) => href === '/dashboard' ? path === '/dashboard' || path === '/dashboard/' : path.startsWith(href)).at(-1)?.[0];
  return html`<a class="skip" href="#content">Skip to content</a>
    <header class="top">
      <span class="brand">svc</span>
      <nav aria-label="Dashboard"><ul>
        ${NAV.map(([href, label]) => html`<li><${Link} href=${href} aria-current=${section === href ? 'page' : undefined}>${label}${href === '/dashboard/approvals' ? html`<${PendingBadge} />` : null}</${Link}></li>`)}
      </ul></nav>
      <div class="who">
        ${who.data ? html`<span title=${`key ${who.data.keyId ?? ''}`}>${who.data.tenantName ?? who.data.tenantId} · ${who.data.role}</span>` : null}
        <form method="post" action="/dashboard/sign-out"><input type="hidden" name="csrf" value=${csrfToken()} /><button class="link" type="submit">Sign out</button></form>
      </div>
    </header>
    <main id="content" tabindex="-1">${current(path)}</main>
    <footer class="muted">Times in ${timeZone}.</footer>`;
}

render(html`<${App} />`, document.getElementById('app'));
