/**
 * A live card's Stop the cell (issue 20), against a host that records what it is asked: the button shows
 * only while the card's cell runs, a click interrupts (and nothing else), then says so and disables itself.
 */
import { buildCard, isLive } from '../card';
import { StopControl } from '../stop';
import { ICellHost } from '../types';
import { LIVE_LABELS, sample, sampleLive, settle } from './sample';

/** A cell host whose run is `running` until `end()`; records every call. */
function runningHost(interrupted: () => Promise<void> = () => Promise.resolve()) {
  const calls: string[] = [];
  let isRunning = true;
  let listener: (() => void) | null = null;
  const host: ICellHost = {
    insertBelow: () => calls.push('insertBelow'),
    replace: () => calls.push('replace'),
    applyTo: () => {
      calls.push('applyTo');
      return 'applied';
    },
    rerun: () => {
      calls.push('rerun');
      return Promise.resolve('ran');
    },
    running: () => isRunning,
    watchRunning: changed => {
      listener = changed;
      return () => {
        calls.push('unwatch');
        listener = null;
      };
    },
    interrupt: () => {
      calls.push('interrupt');
      return interrupted();
    }
  };
  const end = () => {
    isRunning = false;
    listener?.();
  };
  return { host, calls, end, watched: () => listener !== null };
}

/** A live card with its Stop row, in the page (as the output area attaches it), following `host`. */
function liveCard(host: ICellHost | null, d = sampleLive()) {
  const stop = new StopControl(d);
  const card = buildCard(d, { host: () => host, copy: () => Promise.resolve(true), armed: true }, stop.node);
  document.body.appendChild(card);
  stop.follow(host);
  const button = card.querySelector('.gm-stop') as HTMLButtonElement;
  const status = card.querySelector('.gm-live .gm-status') as HTMLElement;
  return { card, stop, button, status };
}

afterEach(() => document.body.replaceChildren());

describe('Stop the cell', () => {
  it('tells a live card from another', () => {
    expect(isLive(sampleLive())).toBe(true);
    expect(isLive(sample())).toBe(false);
    expect(isLive(sample({ live: null }))).toBe(false);
  });

  it('shows in the live note under the summary while the cell runs, labelled from the card', () => {
    const { host } = runningHost();
    const { card, button } = liveCard(host);
    expect(button.hidden).toBe(false);
    expect(button.disabled).toBe(false);
    expect(button.textContent).toBe('Stop the cell');
    const note = card.querySelector('.gm-summary')!.nextElementSibling as HTMLElement;
    expect(note.className).toBe('gm-live-note');
    expect(note.getAttribute('data-live-step')).toBe('2');
    expect(note.textContent).toContain('Found while the cell runs: Step 2: optimizer stepped with the gradients');
    expect(note.textContent).toContain(sampleLive().live!.cost);
    expect(note.querySelectorAll('code')).toHaveLength(2); // NB: `optimizer`, `.grad`: prose, not HTML
    expect(note.contains(button)).toBe(true);
    expect((card.querySelector('.gm-interrupt') as HTMLElement).hidden).toBe(true); // NB: the button says it
    const zh = sampleLive({ labels: { ...LIVE_LABELS, stop: '停止运行该单元格' } });
    expect(liveCard(runningHost().host, zh).button.textContent).toBe('停止运行该单元格');
  });

  it('interrupts the kernel and nothing else, then says so and disables itself', async () => {
    const { host, calls } = runningHost();
    const { button, status } = liveCard(host);
    button.click();
    expect(button.disabled).toBe(true);
    await settle();
    expect(calls).toEqual(['interrupt']);
    expect(status.textContent).toBe('Interrupt sent.');
    button.click(); // NB: a disabled button sends no second interrupt
    await settle();
    expect(calls).toEqual(['interrupt']);
  });

  it('goes away when the cell ends, and the status it said stays', async () => {
    const { host, end } = runningHost();
    const { card, button, status } = liveCard(host);
    button.click();
    await settle();
    end();
    expect(button.hidden).toBe(true);
    expect(status.textContent).toBe('Interrupt sent.');
    expect((card.querySelector('.gm-live') as HTMLElement).hidden).toBe(false);
  });

  it('is never shown once the cell is done, and the row is hidden with nothing to say', () => {
    const { host, end } = runningHost();
    end();
    const { card, button } = liveCard(host);
    expect(button.hidden).toBe(true);
    expect((card.querySelector('.gm-live') as HTMLElement).hidden).toBe(true);
  });

  it('is not shown outside a notebook cell, where the card says to interrupt instead', () => {
    const { card, button } = liveCard(null);
    expect(button.hidden).toBe(true);
    expect((card.querySelector('.gm-interrupt') as HTMLElement).hidden).toBe(false);
    expect(card.querySelector('.gm-interrupt')!.textContent).toBe(LIVE_LABELS.interrupt);
  });

  it('an unarmed live card (a saved notebook) has no button and says to interrupt', () => {
    const card = buildCard(sampleLive(), { host: () => null, copy: () => Promise.resolve(true), armed: false });
    expect(card.querySelectorAll('button')).toHaveLength(0);
    expect(card.querySelector('.gm-live-note .gm-interrupt')!.textContent).toBe(LIVE_LABELS.interrupt);
  });

  it('a card shown when its cell ended has no live note', () => {
    const card = buildCard(sample(), { host: () => null, copy: () => Promise.resolve(true), armed: true });
    expect(card.querySelector('.gm-live-note')).toBeNull();
  });

  it('says when the interrupt did not reach the kernel', async () => {
    const { host } = runningHost(() => Promise.reject(new Error('kernel gone')));
    const { button, status } = liveCard(host);
    button.click();
    await settle();
    expect(status.textContent).toBe(LIVE_LABELS.stop_failed);
  });

  it('stops watching the run when unfollowed', () => {
    const { host, calls, watched } = runningHost();
    const { stop } = liveCard(host);
    expect(watched()).toBe(true);
    stop.unfollow();
    expect(watched()).toBe(false);
    expect(calls).toEqual(['unwatch']);
  });
});
