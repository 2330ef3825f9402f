/**
 * A live card's "Stop the cell" (issue 20): the card of a silent bug shows while its cell still trains;
 * this button interrupts the kernel, as the toolbar's stop button does. It never runs code.
 *
 * NB: shown only while the cell that displayed the card is running (`ICellHost.running`: its [*] prompt,
 * on a kernel that is up), and only on an armed card (the renderer makes none otherwise). When the cell
 * ends the button is hidden (a card's cell never runs again with that output: a new run clears it). A
 * status line says what the click did, and stays after the button goes. Outside a notebook cell (no host:
 * a console, an output view) the card says to interrupt instead, as the HTML card does.
 */
import { interruptHint, label } from './card';
import { ICellHost, IDiagnosis } from './types';

export class StopControl {
  /** What the live note shows: the button's row, or the hint to interrupt by hand. */
  readonly node: HTMLDivElement;
  private readonly _row: HTMLDivElement;
  private readonly _button: HTMLButtonElement;
  private readonly _status: HTMLSpanElement;
  private readonly _hint: HTMLElement;
  private _host: ICellHost | null = null;
  private _followed = false;
  private _unwatch: (() => void) | null = null;

  constructor(private readonly _d: IDiagnosis) {
    this.node = document.createElement('div');
    this.node.className = 'gm-stop-box';
    this._row = document.createElement('div');
    this._row.className = 'gm-actions gm-live';
    this._button = document.createElement('button');
    this._button.type = 'button';
    this._button.className = 'gm-button gm-stop';
    this._button.textContent = label(_d, 'stop', 'Stop the cell');
    this._button.addEventListener('click', event => {
      event.preventDefault();
      event.stopPropagation(); // NB: the notebook must not treat the click as a click on the output
      this._stop();
    });
    this._status = document.createElement('span');
    this._status.className = 'gm-status';
    this._status.setAttribute('role', 'status');
    this._status.setAttribute('aria-live', 'polite');
    this._row.append(this._button, this._status);
    this._hint = interruptHint(_d);
    this.node.append(this._row, this._hint);
    this._update();
  }

  /** Follow the run of the cell now showing the card (null: not in a notebook cell, nothing to stop). */
  follow(host: ICellHost | null): void {
    this.unfollow();
    this._host = host;
    this._followed = true;
    this._unwatch = host ? host.watchRunning(() => this._update()) : null;
    this._update();
  }

  /** Stop following: the card left the page (or is rendered anew). */
  unfollow(): void {
    this._unwatch?.();
    this._unwatch = null;
    this._host = null;
    this._followed = false;
  }

  private _update(): void {
    this._button.hidden = !(this._host !== null && this._host.running());
    this._row.hidden = this._button.hidden && !this._status.textContent;
    this._hint.hidden = !(this._followed && this._host === null);
  }

  private _stop(): void {
    const host = this._host;
    if (host === null || !host.running()) {
      this._update();
      return;
    }
    this._button.disabled = true;
    host.interrupt().then(
      () => this._say('stop_sent', 'Interrupt sent.'),
      () => this._say('stop_failed', "The interrupt did not reach the kernel: use the toolbar's stop button.")
    );
  }

  private _say(key: string, fallback: string): void {
    this._status.textContent = label(this._d, key, fallback);
    this._row.hidden = false;
  }
}
