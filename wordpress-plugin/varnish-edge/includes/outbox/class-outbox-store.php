<?php
/**
 * The outbox's rows: where event batches wait for delivery.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Pending batches in the outbox table. Every batch is written here first, then delivered; rows are
 * claimed with a lock token so concurrent requests and cron never send the same row at once.
 * Past a size limit the backlog collapses to one whole-site event. Rows the purger refused stay
 * as dead letters (`dead_at`) for DEAD_KEEP_DAYS, not claimed until revived.
 */
class Outbox_Store {

	const NEXT_DUE_OPTION = 'varnish_edge_outbox_next';
	const MAX_ROWS        = 200;
	const MAX_EVENTS      = 5000;
	const LOCK_SECONDS    = 60;
	const EVENTS_PER_SEND = 500;

	/**
	 * Bytes of events (as stored, the JSON the webhook sends) in one request: under the purger's
	 * 1 MiB body limit (PURGER_BODY_LIMIT) with room for the envelope.
	 */
	const BYTES_PER_SEND = 786432;
	const DEAD_KEEP_DAYS  = 7;

	/**
	 * Hooks: create or upgrade the table when the plugin was activated without its hook.
	 */
	public function register(): void {
		add_action( 'plugins_loaded', array( Outbox_Table::class, 'maybe_install' ) );
	}

	/**
	 * Store a batch of the site, whole-site events confined to it, as rows that each fit one
	 * request (`sendable()`), in order; collapse the backlog past the limit.
	 *
	 * @param string                         $site   Site host.
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 * @return int Id of the last row, 0 when there was nothing to store.
	 */
	public function enqueue( string $site, array $events ): int {
		$id = 0;
		foreach ( self::sendable( Site_Scope::confine( $events ) ) as $part ) {
			$id = $this->insert( $site, $part );
		}
		if ( $id ) {
			$this->maybe_collapse( $site );
		}
		return $id;
	}

	/**
	 * Events in consecutive parts of at most EVENTS_PER_SEND events and BYTES_PER_SEND bytes
	 * (an event is never split here: Event_Builder keeps each small).
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 * @return array<int,array<int,array<string,mixed>>>
	 */
	public static function sendable( array $events ): array {
		// (each event costs its JSON and a comma; the brackets of the list, 2 bytes)
		return Size_Packer::pack( $events, self::EVENTS_PER_SEND, self::BYTES_PER_SEND, static fn( mixed $event ): int => strlen( self::encode( array( $event ) ) ) - 1, 2 );
	}

	/**
	 * Insert one row with a new webhook id (a new payload always gets a new id).
	 *
	 * @param string                         $site       Site host.
	 * @param array<int,array<string,mixed>> $events     Protocol events.
	 * @param bool                           $solo       Always sent alone (split, or replacing a refused batch).
	 * @param int                            $attempts   Failures carried over from the row it replaces.
	 * @param int|null                       $created_at Creation time carried over; null: now.
	 * @return int Row id.
	 */
	public function insert( string $site, array $events, bool $solo = false, int $attempts = 0, ?int $created_at = null ): int {
		global $wpdb;
		$now = time();
		$wpdb->insert(
			Outbox_Table::name(),
			array(
				'message_id'      => self::new_message_id(),
				'site'            => $site,
				'events'          => self::encode( $events ),
				'event_count'     => count( $events ),
				'attempts'        => $attempts,
				'next_attempt_at' => $now,
				'created_at'      => $created_at ?? $now,
				'last_error'      => '',
				'solo'            => $solo ? 1 : 0,
			),
			array( '%s', '%s', '%s', '%d', '%d', '%d', '%d', '%s', '%d' )
		);
		return (int) $wpdb->insert_id;
	}

	/**
	 * A new webhook id.
	 */
	private static function new_message_id(): string {
		return 'msg_' . bin2hex( random_bytes( 12 ) );
	}

	/**
	 * Events as stored.
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 */
	private static function encode( array $events ): string {
		return (string) wp_json_encode( array_values( $events ), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	}

	/**
	 * The events a row holds.
	 *
	 * @param object $row Outbox row.
	 * @return array<int,array<string,mixed>>
	 */
	public static function events_of( object $row ): array {
		return (array) json_decode( $row->events, true );
	}

	/**
	 * Claim due, unlocked rows (same site, oldest first) up to EVENTS_PER_SEND events and
	 * BYTES_PER_SEND bytes; a solo row is always claimed alone.
	 *
	 * @param bool $force Ignore backoff.
	 * @return array<int,object>
	 */
	public function claim( bool $force ): array {
		global $wpdb;
		$table = Outbox_Table::name();
		$now   = time();
		$token = bin2hex( random_bytes( 16 ) );
		$due   = $force ? PHP_INT_MAX : $now;
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET lock_token = %s, locked_until = %d WHERE dead_at = 0 AND locked_until < %d AND next_attempt_at <= %d ORDER BY id LIMIT 50", $token, $now + self::LOCK_SECONDS, $now, $due ) );
		$rows = $wpdb->get_results( $wpdb->prepare( "SELECT * FROM {$table} WHERE lock_token = %s ORDER BY id", $token ) );
		if ( ! $rows ) {
			return array();
		}
		$keep    = array();
		$release = array();
		$events  = 0;
		$bytes   = 0;
		$site    = $rows[0]->site;
		foreach ( $rows as $row ) {
			$alone = array() !== $keep && ( (int) $keep[0]->solo || (int) $row->solo );
			$fits  = array() === $keep || ( $events + (int) $row->event_count <= self::EVENTS_PER_SEND && $bytes + strlen( (string) $row->events ) <= self::BYTES_PER_SEND );
			if ( ! $alone && $row->site === $site && $fits ) {
				$keep[]  = $row;
				$events += (int) $row->event_count;
				$bytes  += strlen( (string) $row->events );
			} else {
				$release[] = (int) $row->id;
			}
		}
		if ( $release ) {
			$this->unlock( $release );
		}
		return $keep;
	}

	/**
	 * Release row locks.
	 *
	 * @param int[] $ids Row ids.
	 */
	private function unlock( array $ids ): void {
		global $wpdb;
		$table = Outbox_Table::name();
		$in    = implode( ',', array_map( 'intval', $ids ) );
		$wpdb->query( "UPDATE {$table} SET locked_until = 0, lock_token = '' WHERE id IN ({$in})" );
	}

	/**
	 * Delete delivered rows.
	 *
	 * @param array<int,object> $rows Claimed rows.
	 */
	public function delete( array $rows ): void {
		global $wpdb;
		$table = Outbox_Table::name();
		$in    = implode( ',', array_map( 'intval', wp_list_pluck( $rows, 'id' ) ) );
		$wpdb->query( "DELETE FROM {$table} WHERE id IN ({$in})" );
	}

	/**
	 * Unlock a failed row until its next attempt.
	 *
	 * @param object $row      Claimed row.
	 * @param int    $attempts Failures so far.
	 * @param int    $due      Unix time of the next attempt.
	 * @param string $error    What failed.
	 */
	public function retry_later( object $row, int $attempts, int $due, string $error ): void {
		$this->release( $row, $error, array( 'attempts' => $attempts, 'next_attempt_at' => $due ) );
	}

	/**
	 * Give a row new events under a new webhook id (the purger may have stored the old id's
	 * receipt), as its first attempt, due at $due.
	 *
	 * @param object                         $row    Claimed row.
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 * @param int                            $due    Unix time of the next attempt.
	 * @param string                         $error  What failed.
	 */
	public function replace( object $row, array $events, int $due, string $error ): void {
		$this->release(
			$row,
			$error,
			array(
				'message_id'      => self::new_message_id(),
				'events'          => self::encode( $events ),
				'event_count'     => count( $events ),
				'attempts'        => 1,
				'next_attempt_at' => $due,
			)
		);
	}

	/**
	 * Keep a row as a dead letter: not claimed again until revived, forgotten after DEAD_KEEP_DAYS.
	 *
	 * @param object $row   Claimed row.
	 * @param string $error Why the purger refused it.
	 */
	public function dead_letter( object $row, string $error ): void {
		$this->release( $row, $error, array( 'dead_at' => time() ) );
	}

	/**
	 * Unlock a claimed row, recording what failed and writing the given columns.
	 *
	 * @param object              $row     Claimed row.
	 * @param string              $error   What failed.
	 * @param array<string,mixed> $columns Other columns to write.
	 */
	private function release( object $row, string $error, array $columns ): void {
		global $wpdb;
		$columns += array(
			'locked_until' => 0,
			'lock_token'   => '',
			'last_error'   => $error,
		);
		$wpdb->update( Outbox_Table::name(), $columns, array( 'id' => (int) $row->id ) );
	}

	/**
	 * Unlock rows and mark them to be sent alone, so one bad row cannot hold the others back.
	 *
	 * @param array<int,object> $rows  Claimed rows.
	 * @param string            $error What failed.
	 */
	public function isolate( array $rows, string $error ): void {
		global $wpdb;
		$table = Outbox_Table::name();
		$ids   = implode( ',', array_map( 'intval', wp_list_pluck( $rows, 'id' ) ) );
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET solo = 1, locked_until = 0, lock_token = '', last_error = %s WHERE id IN ({$ids})", $error ) );
	}

	/**
	 * Replace a row by rows holding its parts, each sent alone, with its attempts and age.
	 *
	 * @param object                                    $row   Claimed row.
	 * @param array<int,array<int,array<string,mixed>>> $parts Events of each new row.
	 */
	public function split( object $row, array $parts ): void {
		global $wpdb;
		foreach ( $parts as $events ) {
			$this->insert( $row->site, $events, true, (int) $row->attempts, (int) $row->created_at );
		}
		$wpdb->delete( Outbox_Table::name(), array( 'id' => (int) $row->id ), array( '%d' ) );
	}

	/**
	 * Whether a whole-site purge of the site is already in the outbox (pending or refused).
	 *
	 * @param string $site Site host.
	 */
	public function holds_whole_site_purge( string $site ): bool {
		global $wpdb;
		$table = Outbox_Table::name();
		foreach ( $wpdb->get_col( $wpdb->prepare( "SELECT events FROM {$table} WHERE site = %s AND event_count = 1 ORDER BY id DESC LIMIT 20", $site ) ) as $json ) {
			if ( Site_Scope::only_whole_site( (array) json_decode( $json, true ) ) ) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Forget dead letters older than DEAD_KEEP_DAYS.
	 */
	public function prune_dead(): void {
		global $wpdb;
		$table = Outbox_Table::name();
		$wpdb->query( $wpdb->prepare( "DELETE FROM {$table} WHERE dead_at > 0 AND dead_at < %d", time() - self::DEAD_KEEP_DAYS * DAY_IN_SECONDS ) );
	}

	/**
	 * Put dead letters back in the queue, each due now and sent alone.
	 *
	 * @return int Rows revived.
	 */
	public function retry_dead(): int {
		global $wpdb;
		$table = Outbox_Table::name();
		return (int) $wpdb->query( $wpdb->prepare( "UPDATE {$table} SET dead_at = 0, solo = 1, attempts = 0, next_attempt_at = %d WHERE dead_at > 0", time() ) );
	}

	/**
	 * When the backlog passes the limit, replace every unlocked row of the site with one
	 * whole-site event.
	 *
	 * @param string $site Site host.
	 * @return bool Whether it collapsed.
	 */
	public function maybe_collapse( string $site ): bool {
		global $wpdb;
		$table = Outbox_Table::name();
		$stats = $wpdb->get_row( "SELECT COUNT(*) AS n, COALESCE(SUM(event_count),0) AS e FROM {$table} WHERE dead_at = 0" );
		if ( ! $stats || ( (int) $stats->n <= self::MAX_ROWS && (int) $stats->e <= self::MAX_EVENTS ) ) {
			return false;
		}
		$now   = time();
		$token = 'collapse-' . bin2hex( random_bytes( 8 ) );
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET lock_token = %s, locked_until = %d WHERE dead_at = 0 AND locked_until < %d AND site = %s", $token, $now + self::LOCK_SECONDS, $now, $site ) );
		$this->insert( $site, array( Site_Scope::whole_site_event( sprintf( 'outbox collapsed: %d pending batches', (int) $stats->n ), $now ) ) );
		$wpdb->query( $wpdb->prepare( "DELETE FROM {$table} WHERE lock_token = %s", $token ) );
		return true;
	}

	/**
	 * Outbox statistics.
	 *
	 * Pending rows (`rows`, `events`, `oldest`, `next_attempt`, `last_error`) exclude dead letters;
	 * `dead`, `dead_at` and `dead_reason` describe those (newest first).
	 *
	 * @return array{rows:int,events:int,oldest:int,next_attempt:int,last_error:string,dead:int,dead_at:int,dead_reason:string}
	 */
	public function stats(): array {
		global $wpdb;
		$table = Outbox_Table::name();
		$row   = $wpdb->get_row( "SELECT COUNT(*) AS n, COALESCE(SUM(event_count),0) AS e, COALESCE(MIN(created_at),0) AS oldest, COALESCE(MIN(next_attempt_at),0) AS next_at FROM {$table} WHERE dead_at = 0" );
		$error = (string) $wpdb->get_var( "SELECT last_error FROM {$table} WHERE dead_at = 0 AND last_error <> '' ORDER BY id DESC LIMIT 1" );
		$dead  = $wpdb->get_row( "SELECT COUNT(*) AS n, COALESCE(MAX(dead_at),0) AS at FROM {$table} WHERE dead_at > 0" );
		$why   = (string) $wpdb->get_var( "SELECT last_error FROM {$table} WHERE dead_at > 0 ORDER BY dead_at DESC, id DESC LIMIT 1" );
		return array(
			'rows'         => (int) ( $row->n ?? 0 ),
			'events'       => (int) ( $row->e ?? 0 ),
			'oldest'       => (int) ( $row->oldest ?? 0 ),
			'next_attempt' => (int) ( $row->next_at ?? 0 ),
			'last_error'   => $error,
			'dead'         => (int) ( $dead->n ?? 0 ),
			'dead_at'      => (int) ( $dead->at ?? 0 ),
			'dead_reason'  => $why,
		);
	}

	/**
	 * Note when the next pending row is due, in an autoloaded option later requests read for free.
	 *
	 * @return int Unix time of the next attempt, 0 when nothing is pending.
	 */
	public function note_next_due(): int {
		$stats = $this->stats();
		$next  = $stats['rows'] ? max( 1, $stats['next_attempt'] ) : 0;
		update_option( self::NEXT_DUE_OPTION, $next, true );
		return $next;
	}

	/**
	 * Whether a pending row is due now, as last noted (no query).
	 */
	public function has_due(): bool {
		$next = (int) get_option( self::NEXT_DUE_OPTION, 0 );
		return $next > 0 && $next <= time();
	}

	/**
	 * Delete every row, dead letters included.
	 *
	 * @return int Rows deleted.
	 */
	public function clear(): int {
		global $wpdb;
		$n = (int) $wpdb->query( 'DELETE FROM ' . Outbox_Table::name() );
		$this->note_next_due();
		return $n;
	}
}
