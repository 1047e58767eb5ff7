import { say } from './dom.ts';
import type { FeedStatus } from './feed.ts';
import type { AppState } from './state.ts';

export interface StatusElements {
  /** role=status at the top of the list: what the person's last action did. */
  readonly notice: HTMLElement;
  readonly feed: HTMLElement;
  readonly resume: HTMLButtonElement;
}

const FEED_TEXT: Readonly<Record<FeedStatus, string>> = {
  off: '',
  live: 'Live: changes made elsewhere appear as they happen.',
  interrupted: 'Live updates interrupted; reconnecting.',
  stopped: 'Live updates stopped: the service no longer accepts this sign-in.',
};

/** The notice and the live-updates line, with Resume when the feed is not live. */
export function createStatusView(elements: StatusElements, resume: () => void): { render(state: AppState): void } {
  const { notice, feed, resume: button } = elements;
  button.addEventListener('click', resume);
  return {
    render(state) {
      say(notice, state.notice);
      say(feed, FEED_TEXT[state.feed]);
      button.hidden = state.feed !== 'interrupted' && state.feed !== 'stopped';
    },
  };
}
