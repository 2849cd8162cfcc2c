<?php
/**
 * Rate limit for cheap, wide invalidations.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Lets a key through at most once per window (leading edge) and holds later requests for it
 * until the window ends (one trailing purge), so that anyone able to trigger a wide invalidation
 * cheaply (an auto-approved anonymous comment soft-purges every page showing recent comments)
 * cannot make the whole site refetch on every request. Nothing is dropped: held keys are
 * released by the first request that ends after the window (`release_due()` at `shutdown`) and by
 * a WP-Cron event scheduled at the window's end.
 *
 * The state lives in one option updated with compare-and-swap, so concurrent requests cannot
 * lose a held key. (Its option, cron hook and filter keep their first names, `coalesce`: sites
 * and code already use them.)
 */
class Rate_Limit {

	const OPTION     = 'varnish_edge_coalesced';
	const DUE_OPTION = 'varnish_edge_coalesced_due';
	const CRON_HOOK  = 'varnish_edge_release_coalesced';
	const WINDOW     = 10;

	/** @var Event_Queue Queue the released invalidations go to. */
	private $queue;

	/**
	 * Constructor.
	 *
	 * @param Event_Queue $queue Queue the released invalidations go to.
	 */
	public function __construct( Event_Queue $queue ) {
		$this->queue = $queue;
	}

	/**
	 * Hook into WordPress: held keys are released at the end of a request, before the queue's
	 * batch is built (shutdown, 99), and by the WP-Cron event scheduled for the window's end.
	 */
	public function register(): void {
		add_action( 'shutdown', array( $this, 'release_due' ), 99 );
		add_action( self::CRON_HOOK, array( $this, 'release_due' ) );
	}

	/**
	 * Window of a key, in seconds.
	 */
	private function window( string $tag ): int {
		/**
		 * Seconds during which a rate-limited key is purged at most once (then once more at the
		 * end of the window if it was asked for again). 0 disables the limit.
		 *
		 * @param int    $seconds Window.
		 * @param string $tag     Key.
		 */
		return max( 0, (int) apply_filters( 'varnish_edge_coalesce_window', self::WINDOW, $tag ) );
	}

	/**
	 * Invalidate keys now, or once their window ends if they were invalidated less than a window ago.
	 *
	 * @param string[] $tags   Keys.
	 * @param bool     $soft   Soft purge.
	 * @param string   $reason Reason.
	 */
	public function add( array $tags, bool $soft, string $reason ): void {
		$now  = time();
		$sent = $this->update(
			function ( array $state ) use ( $tags, $soft, $reason, $now ): array {
				$now_tags = array();
				foreach ( $tags as $tag ) {
					$window = $this->window( $tag );
					if ( $window > 0 && ( $state['until'][ $tag ] ?? 0 ) > $now ) {
						$held                    = $state['held'][ $tag ] ?? array( 'soft' => true, 'reasons' => array() );
						$held['soft']            = $held['soft'] && $soft;
						$held['reasons'][]       = $reason;
						$held['reasons']         = array_slice( array_unique( $held['reasons'] ), -5 );
						$state['held'][ $tag ]   = $held;
						continue;
					}
					$state['until'][ $tag ] = $now + $window;
					$now_tags[]             = $tag;
				}
				return array( $state, $now_tags );
			}
		);
		if ( null === $sent ) {
			$sent = $tags; // State unwritable: no rate limit rather than a lost purge.
		}
		if ( $sent ) {
			$this->queue->add( ( new Invalidation() )->tags( $sent, $soft )->reason( $reason ) );
		}
	}

	/**
	 * Whether held keys are due.
	 *
	 * @param int|null $now Time (now when null).
	 */
	public function has_due( ?int $now = null ): bool {
		// From the autoloaded set: no query on the requests (nearly all) with nothing held.
		$all = wp_load_alloptions();
		$due = (int) ( $all[ self::DUE_OPTION ] ?? 0 );
		return $due > 0 && $due <= ( $now ?? time() );
	}

	/**
	 * Action `shutdown` (before the queue is committed) and the WP-Cron event: queue the held
	 * keys whose window has ended.
	 */
	public function release_due(): void {
		if ( $this->has_due() || doing_action( self::CRON_HOOK ) ) {
			$this->release( time() );
		}
	}

	/**
	 * Queue the held keys whose window ended by $now (each starts a new window).
	 */
	public function release( int $now ): void {
		$released = $this->update(
			function ( array $state ) use ( $now ): array {
				$out = array();
				foreach ( $state['held'] as $tag => $held ) {
					if ( ( $state['until'][ $tag ] ?? 0 ) <= $now ) {
						$out[ $tag ]            = $held;
						$state['until'][ $tag ] = $now + $this->window( $tag );
						unset( $state['held'][ $tag ] );
					}
				}
				return array( $state, $out );
			}
		);
		foreach ( (array) $released as $tag => $held ) {
			$this->queue->add(
				( new Invalidation() )->tags( array( $tag ), (bool) $held['soft'] )
					->reason( 'rate-limited: ' . implode( '; ', (array) $held['reasons'] ) )
			);
		}
	}

	/**
	 * Read-modify-write of the state with compare-and-swap on the stored value.
	 *
	 * @param callable $change Takes the state, returns array( new state, result ).
	 * @return mixed Result of the successful change; null when the state could not be written.
	 */
	private function update( callable $change ): mixed {
		global $wpdb;
		for ( $attempt = 0; $attempt < 8; $attempt++ ) {
			$raw   = $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", self::OPTION ) );
			$state = null === $raw ? array() : maybe_unserialize( $raw );
			$state = is_array( $state ) ? $state : array();
			$state += array(
				'until' => array(),
				'held'  => array(),
			);
			list( $state, $result ) = $change( $state );
			$now = time();
			foreach ( $state['until'] as $tag => $until ) {
				if ( $until <= $now && ! isset( $state['held'][ $tag ] ) ) {
					unset( $state['until'][ $tag ] ); // Keep the option small.
				}
			}
			$new = maybe_serialize( $state );
			if ( ! $state['until'] && ! $state['held'] ) {
				// Nothing to remember: no row at all (nothing left behind).
				$ok = null === $raw ? 1 : $wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->options} WHERE option_name = %s AND option_value = %s", self::OPTION, $raw ) );
			} elseif ( null === $raw ) {
				$ok = $wpdb->query( $wpdb->prepare( "INSERT IGNORE INTO {$wpdb->options} (option_name, option_value, autoload) VALUES (%s, %s, 'no')", self::OPTION, $new ) );
			} elseif ( $new === $raw ) {
				$ok = 1;
			} else {
				$ok = $wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->options} SET option_value = %s WHERE option_name = %s AND option_value = %s", $new, self::OPTION, $raw ) );
			}
			if ( $ok ) {
				wp_cache_delete( self::OPTION, 'options' );
				$this->schedule( $state );
				return $result;
			}
		}
		return null;
	}

	/**
	 * Record when the earliest held key is due (a cheap autoloaded timestamp every request reads)
	 * and schedule a WP-Cron run for it.
	 */
	private function schedule( array $state ): void {
		$due = 0;
		foreach ( array_keys( $state['held'] ) as $tag ) {
			$until = (int) ( $state['until'][ $tag ] ?? 0 );
			$due   = 0 === $due ? $until : min( $due, $until );
		}
		if ( 0 === $due ) {
			if ( false !== get_option( self::DUE_OPTION ) ) {
				delete_option( self::DUE_OPTION );
			}
		} elseif ( (int) get_option( self::DUE_OPTION, 0 ) !== $due ) {
			update_option( self::DUE_OPTION, $due, true );
		}
		if ( $due > 0 && ! wp_next_scheduled( self::CRON_HOOK ) ) {
			wp_schedule_single_event( max( $due, time() + 1 ), self::CRON_HOOK );
		}
	}

	/**
	 * Forget every window and held key (tests, uninstall).
	 */
	public function reset(): void {
		delete_option( self::OPTION );
		delete_option( self::DUE_OPTION );
		wp_clear_scheduled_hook( self::CRON_HOOK );
	}
}
