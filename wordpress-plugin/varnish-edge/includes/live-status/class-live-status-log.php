<?php
/**
 * Which events each person's recent actions produced.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Per user, the last few actions (a post saved in an editor, a manual purge) with the ids of the
 * events they produced, so the editor can ask how far they got. A save is written down while it
 * runs (ids unknown yet) and completed when the request's batch is committed, after the response:
 * the editor's first question may come before that. Entries are kept for EXPIRES seconds, at
 * most MAX_ENTRIES per user, in user meta.
 *
 * Per site, the last change sent to the purger, whoever or whatever made it (an editor, WP-CLI,
 * WP-Cron, a visitor's comment): the posts saved in that request, or the events' reason, and the
 * ids of its events (`last_change()`, option LAST_OPTION), for Site Health.
 */
class Live_Status_Log {

	const META        = 'varnish_edge_live';
	const MAX_ENTRIES = 10;
	const EXPIRES     = 900;

	/**
	 * Option holding the site's last change sent to the purger.
	 */
	const LAST_OPTION = 'varnish_edge_last_change';

	/**
	 * Posts named in the last change, at most (the count is kept too).
	 */
	const LAST_POSTS = 5;

	/** @var Settings */
	private $settings;

	/** @var array<int,int> Posts saved by the current user in this request => when (ms). */
	private $saved = array();

	/** @var array<int,int> Posts saved in this request by anyone (or by code) => when (ms). */
	private $changed = array();

	/**
	 * Constructor.
	 *
	 * @param Settings $settings Whether events reach the purger at all.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Hooks: saves while they run, the request's batch, and the end of the request.
	 */
	public function register(): void {
		add_action( 'save_post', array( $this, 'on_save_post' ), 10, 2 );
		add_action( 'varnish_edge_events_committed', array( $this, 'on_committed' ) );
		add_action( 'shutdown', array( $this, 'on_shutdown' ), 101 ); // After the queue's dispatch (100).
	}

	/**
	 * Now, in milliseconds.
	 */
	public static function now_ms(): int {
		return (int) floor( microtime( true ) * 1000 );
	}

	/**
	 * Action `save_post`: a person (or code) saved a post; autosaves and revisions are not changes.
	 */
	public function on_save_post( int $post_id, \WP_Post $post ): void {
		if ( wp_is_post_revision( $post ) || wp_is_post_autosave( $post ) || ( defined( 'DOING_AUTOSAVE' ) && DOING_AUTOSAVE ) ) {
			return;
		}
		if ( in_array( $post->post_type, Post_Change_Policy::IGNORED_TYPES, true ) ) {
			return;
		}
		if ( ! isset( $this->changed[ $post_id ] ) ) {
			$this->changed[ $post_id ] = self::now_ms();
		}
		$user = get_current_user_id();
		if ( $user <= 0 || isset( $this->saved[ $post_id ] ) ) {
			return;
		}
		$this->saved[ $post_id ] = $this->changed[ $post_id ];
		$this->write( $user, $post_id, $this->saved[ $post_id ], null );
	}

	/**
	 * Action `varnish_edge_events_committed`: the saves of this request produced these events.
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 */
	public function on_committed( array $events ): void {
		if ( $events && $this->settings->is_configured() ) {
			$this->write_last_change( $events );
		}
		$this->changed = array();
		$user          = get_current_user_id();
		if ( $user <= 0 || ! $this->saved ) {
			return;
		}
		$ids = self::ids_of( $events );
		foreach ( $this->saved as $post_id => $at ) {
			$this->write( $user, $post_id, $at, $ids );
		}
		$this->saved = array();
	}

	/**
	 * Action `shutdown` (after the batch): saves that produced no event are complete too.
	 */
	public function on_shutdown(): void {
		$user = get_current_user_id();
		foreach ( $this->saved as $post_id => $at ) {
			$this->write( $user, $post_id, $at, array() );
		}
		$this->saved   = array();
		$this->changed = array();
	}

	/**
	 * The site's last change sent to the purger (stored in the outbox for it), or null when none
	 * was sent yet: the posts saved in that request (`posts`, at most LAST_POSTS, and their
	 * `count`), what the events say when no post was saved (`what`: a manual purge, a comment, an
	 * option…), when (`at`, ms) and its event ids (`ids`), as `Live_Status` takes them.
	 *
	 * @return array{post:int,posts:int[],count:int,what:string,at:int,ids:string[]}|null
	 */
	public function last_change(): ?array {
		$last = get_option( self::LAST_OPTION );
		if ( ! is_array( $last ) || empty( $last['ids'] ) || ! is_array( $last['ids'] ) || ! isset( $last['at'] ) ) {
			return null;
		}
		$posts = array_values( array_filter( array_map( 'intval', (array) ( $last['posts'] ?? array() ) ) ) );
		return array(
			'post'  => $posts[0] ?? 0,
			'posts' => $posts,
			'count' => max( count( $posts ), (int) ( $last['count'] ?? 0 ) ),
			'what'  => is_string( $last['what'] ?? null ) ? $last['what'] : '',
			'at'    => (int) $last['at'],
			'ids'   => array_values( array_map( 'strval', $last['ids'] ) ),
		);
	}

	/**
	 * Write down the site's last change: this request's batch.
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events, stored in the outbox.
	 */
	private function write_last_change( array $events ): void {
		$ids = self::ids_of( $events );
		if ( ! $ids ) {
			return;
		}
		$reason = is_string( $events[0]['reason'] ?? null ) ? $events[0]['reason'] : '';
		if ( mb_strlen( $reason ) > 120 ) {
			$reason = mb_substr( $reason, 0, 119 ) . '…';
		}
		update_option(
			self::LAST_OPTION,
			array(
				'posts' => array_slice( array_keys( $this->changed ), 0, self::LAST_POSTS ),
				'count' => count( $this->changed ),
				'what'  => $reason,
				'at'    => $this->changed ? min( $this->changed ) : self::now_ms(),
				'ids'   => array_slice( $ids, 0, Live_Status::MAX_IDS ),
			),
			false
		);
	}

	/**
	 * Write down an action that produced these events (a manual purge: post 0).
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 * @return array{post:int,at:int,ids:string[]|null} The entry.
	 */
	public function record( int $user, int $post_id, int $at, array $events ): array {
		return $this->write( $user, $post_id, $at, self::ids_of( $events ) );
	}

	/**
	 * The user's latest action on a post (0: their latest manual purge), or null. A save that
	 * produced nothing right after one that did (the editor's meta-box save) gives way to it.
	 *
	 * @return array{post:int,at:int,ids:string[]|null}|null
	 */
	public function latest( int $user, int $post_id ): ?array {
		$mine = array_values(
			array_filter(
				$this->entries( $user ),
				static function ( array $entry ) use ( $post_id ): bool {
					return $entry['post'] === $post_id;
				}
			)
		);
		$newest = end( $mine );
		if ( ! $newest ) {
			return null;
		}
		if ( array() === $newest['ids'] ) {
			foreach ( array_reverse( $mine ) as $entry ) {
				if ( $entry['ids'] && $newest['at'] - $entry['at'] <= 30000 ) {
					return $entry;
				}
			}
		}
		return $newest;
	}

	/**
	 * Event ids of events.
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 * @return string[]
	 */
	private static function ids_of( array $events ): array {
		$ids = array();
		foreach ( $events as $event ) {
			if ( isset( $event['id'] ) && is_string( $event['id'] ) ) {
				$ids[] = $event['id'];
			}
		}
		return $ids;
	}

	/**
	 * The user's unexpired entries, oldest first.
	 *
	 * @return array<int,array{post:int,at:int,ids:string[]|null}>
	 */
	private function entries( int $user ): array {
		$stored = get_user_option( self::META, $user );
		$since  = self::now_ms() - self::EXPIRES * 1000;
		$out    = array();
		foreach ( is_array( $stored ) ? $stored : array() as $entry ) {
			if ( is_array( $entry ) && isset( $entry['post'], $entry['at'] ) && (int) $entry['at'] >= $since ) {
				$out[] = array(
					'post' => (int) $entry['post'],
					'at'   => (int) $entry['at'],
					'ids'  => is_array( $entry['ids'] ?? null ) ? array_map( 'strval', $entry['ids'] ) : null,
				);
			}
		}
		return $out;
	}

	/**
	 * Add or complete an entry (same post and time), keeping the newest MAX_ENTRIES.
	 *
	 * @param string[]|null $ids Event ids (null: not known yet); appended to those already known.
	 * @return array{post:int,at:int,ids:string[]|null}
	 */
	private function write( int $user, int $post_id, int $at, ?array $ids ): array {
		$entry = array(
			'post' => $post_id,
			'at'   => $at,
			'ids'  => $ids,
		);
		if ( $user <= 0 ) {
			return $entry; // WP-CLI without --user: nobody to show it to later.
		}
		$entries = $this->entries( $user );
		foreach ( $entries as $i => $old ) {
			if ( $old['post'] === $post_id && $old['at'] === $at ) {
				if ( null !== $ids && null !== $old['ids'] ) {
					$entry['ids'] = array_values( array_unique( array_merge( $old['ids'], $ids ) ) );
				}
				unset( $entries[ $i ] );
			}
		}
		$entries[] = $entry;
		update_user_option( $user, self::META, array_slice( array_values( $entries ), -self::MAX_ENTRIES ) );
		return $entry;
	}
}
