<?php
/**
 * Durable outbox for event batches.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * A custom table of pending batches. Every batch is written here first, then delivered; rows are
 * claimed with a lock token so concurrent requests and cron never send the same row at once.
 * Failed rows back off exponentially; past a size limit the backlog collapses to one "all" event.
 * Permanent refusals are not retried: a batch too large (413) is split in halves, a batch refused
 * as invalid or for an unknown site (400, 403, …) is dead-lettered: kept, visible with its reason,
 * not retried until an administrator delivers the outbox by hand, and replaced by a whole-site purge.
 */
class Outbox {

	const DB_VERSION      = '2';
	const DB_OPTION       = 'varnish_edge_db_version';
	const STATUS_OPTION   = 'varnish_edge_status';
	const MAX_ROWS        = 200;
	const MAX_EVENTS      = 5000;
	const MAX_ATTEMPTS    = 25;
	const LOCK_SECONDS    = 60;
	const EVENTS_PER_SEND = 500;
	const CRON_HOOK       = 'varnish_edge_process_outbox';
	const DEAD_KEEP_DAYS  = 7;

	/**
	 * Answers that no retry of the same request can change.
	 */
	const PERMANENT_CODES = array( 400, 403, 413, 415, 422 );

	/** @var Webhook_Client */
	private $client;

	/**
	 * Constructor.
	 *
	 * @param Webhook_Client $client Client.
	 */
	public function __construct( Webhook_Client $client ) {
		$this->client = $client;
	}

	/**
	 * Table name.
	 *
	 * @return string
	 */
	public static function table() {
		global $wpdb;
		return $wpdb->prefix . 'varnish_edge_outbox';
	}

	/**
	 * Create or upgrade the table (idempotent; activation hook and plugins_loaded).
	 */
	public static function install() {
		global $wpdb;
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		$table   = self::table();
		$charset = $wpdb->get_charset_collate();
		dbDelta(
			"CREATE TABLE {$table} (
				id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
				message_id varchar(64) NOT NULL,
				site varchar(253) NOT NULL,
				events longtext NOT NULL,
				event_count int(10) unsigned NOT NULL DEFAULT 0,
				attempts int(10) unsigned NOT NULL DEFAULT 0,
				next_attempt_at bigint(20) unsigned NOT NULL DEFAULT 0,
				locked_until bigint(20) unsigned NOT NULL DEFAULT 0,
				lock_token varchar(40) NOT NULL DEFAULT '',
				last_error text NULL,
				created_at bigint(20) unsigned NOT NULL DEFAULT 0,
				solo tinyint(1) unsigned NOT NULL DEFAULT 0,
				dead_at bigint(20) unsigned NOT NULL DEFAULT 0,
				PRIMARY KEY  (id),
				KEY due (next_attempt_at),
				KEY lock_token (lock_token)
			) {$charset};"
		);
		update_option( self::DB_OPTION, self::DB_VERSION, true );
	}

	/**
	 * Install when the stored schema version is missing or old (plugin activated without its hook).
	 */
	public static function maybe_install() {
		if ( get_option( self::DB_OPTION ) !== self::DB_VERSION ) {
			self::install();
		}
	}

	/**
	 * Store a batch.
	 *
	 * @param string $site   Site host.
	 * @param array  $events Events.
	 * @return int Row id.
	 */
	public function enqueue( $site, array $events ) {
		if ( array() === $events ) {
			return 0;
		}
		$id = $this->insert( $site, Site_Scope::confine( $events ) );
		$this->maybe_collapse( $site );
		return $id;
	}

	/**
	 * Insert one row with a new webhook id (a new payload always gets a new id).
	 *
	 * @param string $site   Site host.
	 * @param array  $events Events.
	 * @param array  $extra  Column overrides (attempts, solo, created_at).
	 * @return int Row id.
	 */
	private function insert( $site, array $events, array $extra = array() ) {
		global $wpdb;
		$now = time();
		$wpdb->insert(
			self::table(),
			array(
				'message_id'      => self::new_message_id(),
				'site'            => $site,
				'events'          => self::encode( $events ),
				'event_count'     => count( $events ),
				'attempts'        => (int) ( $extra['attempts'] ?? 0 ),
				'next_attempt_at' => $now,
				'created_at'      => (int) ( $extra['created_at'] ?? $now ),
				'last_error'      => '',
				'solo'            => empty( $extra['solo'] ) ? 0 : 1,
			),
			array( '%s', '%s', '%s', '%d', '%d', '%d', '%d', '%s', '%d' )
		);
		return (int) $wpdb->insert_id;
	}

	/**
	 * A new webhook id.
	 *
	 * @return string
	 */
	private static function new_message_id() {
		return 'msg_' . bin2hex( random_bytes( 12 ) );
	}

	/**
	 * Events as stored.
	 *
	 * @param array $events Events.
	 * @return string
	 */
	private static function encode( array $events ) {
		return (string) wp_json_encode( array_values( $events ), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	}

	/**
	 * Deliver due rows (or every row when $force). Stops at the first failure.
	 *
	 * @param bool $force       Ignore backoff.
	 * @param int  $max_batches Maximum webhooks to send.
	 * @return array{sent:int,events:int,failed:int,refused:int,error:string} `refused`: batches dead-lettered.
	 */
	public function process( $force = false, $max_batches = 10 ) {
		$this->prune_dead();
		$report = array(
			'sent'    => 0,
			'events'  => 0,
			'failed'  => 0,
			'refused' => 0,
			'error'   => '',
		);
		for ( $i = 0; $i < $max_batches; $i++ ) {
			$rows = $this->claim( $force );
			if ( array() === $rows ) {
				break;
			}
			$result = $this->deliver( $rows );
			if ( $result['ok'] ) {
				++$report['sent'];
				$report['events'] += array_sum( wp_list_pluck( $rows, 'event_count' ) );
			} elseif ( ! empty( $result['handled'] ) ) {
				// Split or dead-lettered: what is left is due now, carry on.
				$report['error']    = $result['error'];
				$report['refused'] += $result['dead'];
			} else {
				++$report['failed'];
				$report['error'] = $result['error'];
				break;
			}
		}
		$this->schedule_next();
		return $report;
	}

	/**
	 * Claim due, unlocked rows (same site, oldest first) up to EVENTS_PER_SEND events.
	 *
	 * @param bool $force Ignore backoff.
	 * @return array<int,object>
	 */
	private function claim( $force ) {
		global $wpdb;
		$table = self::table();
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
		$site    = $rows[0]->site;
		foreach ( $rows as $row ) {
			// A solo row (split or isolated after a refusal) is always sent alone.
			$alone = array() !== $keep && ( (int) $keep[0]->solo || (int) $row->solo );
			if ( ! $alone && $row->site === $site && ( array() === $keep || $events + (int) $row->event_count <= self::EVENTS_PER_SEND ) ) {
				$keep[]  = $row;
				$events += (int) $row->event_count;
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
	 * Send claimed rows as one webhook; delete on success, split or dead-letter on a permanent
	 * refusal, back off on any other failure.
	 *
	 * @param array<int,object> $rows Rows.
	 * @return array{ok:bool,code:int,error:string,handled?:bool,dead?:int}
	 */
	private function deliver( array $rows ) {
		global $wpdb;
		$table  = self::table();
		$events = array();
		$ids    = array();
		foreach ( $rows as $row ) {
			$ids[]  = (int) $row->id;
			$events = array_merge( $events, (array) json_decode( $row->events, true ) );
		}
		// A retry of the same rows reuses the same webhook id.
		$message_id = 1 === count( $rows ) ? $rows[0]->message_id : 'msg_' . substr( hash( 'sha256', implode( ',', wp_list_pluck( $rows, 'message_id' ) ) ), 0, 40 );
		$result     = $this->client->send( $message_id, $rows[0]->site, $events );
		$in         = implode( ',', array_map( 'intval', $ids ) );
		if ( $result['ok'] ) {
			$wpdb->query( "DELETE FROM {$table} WHERE id IN ({$in})" );
			$this->record_status( true, count( $events ), '' );
			return $result;
		}
		$this->record_status( false, 0, $result['error'] );
		if ( in_array( (int) $result['code'], self::PERMANENT_CODES, true ) ) {
			$result['dead']    = $this->refused( $rows, $events, $result );
			$result['handled'] = true;
			return $result;
		}
		foreach ( $rows as $row ) {
			$attempts = (int) $row->attempts + 1;
			$update   = array(
				'attempts'        => $attempts,
				'next_attempt_at' => time() + self::backoff( $attempts ),
				'locked_until'    => 0,
				'lock_token'      => '',
				'last_error'      => $result['error'],
			);
			if ( $attempts >= self::MAX_ATTEMPTS ) {
				// Undeliverable for hours: replace with a whole-site purge so nothing is lost. A new
				// payload gets a new webhook id (the purger may have stored the old id's receipt).
				$update = array_merge(
					$update,
					array(
						'message_id'  => self::new_message_id(),
						'events'      => self::encode( array( Site_Scope::whole_site_event( 'undeliverable batch replaced by a full purge', time() ) ) ),
						'event_count' => 1,
						'attempts'    => 1,
					)
				);
				$update['next_attempt_at'] = time() + self::backoff( 1 );
			}
			$wpdb->update( $table, $update, array( 'id' => (int) $row->id ) );
		}
		return $result;
	}

	/**
	 * A permanent refusal. Several merged rows are first retried one by one, so one bad row cannot
	 * hold the others back. A single row answered 413 is split in halves (new rows, new webhook
	 * ids, the same event ids); any other refusal, or a 413 for one event that cannot be split,
	 * dead-letters the row and queues a whole-site purge in its place.
	 *
	 * @param array<int,object> $rows   Claimed rows.
	 * @param array             $events Their events.
	 * @param array             $result Client result.
	 * @return int Rows dead-lettered (0 or 1).
	 */
	private function refused( array $rows, array $events, array $result ) {
		global $wpdb;
		$table = self::table();
		$ids   = implode( ',', array_map( 'intval', wp_list_pluck( $rows, 'id' ) ) );
		if ( count( $rows ) > 1 ) {
			$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET solo = 1, locked_until = 0, lock_token = '', last_error = %s WHERE id IN ({$ids})", $result['error'] ) );
			return 0;
		}
		$row    = $rows[0];
		$halves = 413 === (int) $result['code'] ? self::halve( $events ) : null;
		if ( null !== $halves ) {
			foreach ( $halves as $half ) {
				$this->insert(
					$row->site,
					$half,
					array(
						'solo'       => true,
						'attempts'   => (int) $row->attempts,
						'created_at' => (int) $row->created_at,
					)
				);
			}
			$wpdb->delete( $table, array( 'id' => (int) $row->id ), array( '%d' ) );
			return 0;
		}
		$wpdb->update(
			$table,
			array(
				'dead_at'      => time(),
				'locked_until' => 0,
				'lock_token'   => '',
				'last_error'   => $result['error'],
			),
			array( 'id' => (int) $row->id ),
			array( '%d', '%d', '%s', '%s' ),
			array( '%d' )
		);
		if ( ! Site_Scope::only_whole_site( $events ) && ! $this->holds_whole_site_purge( $row->site ) ) {
			$reason = sprintf( 'batch refused by the purger (HTTP %d) replaced by a full purge', (int) $result['code'] );
			$this->insert( $row->site, array( Site_Scope::whole_site_event( $reason, time() ) ), array( 'solo' => true ) );
		}
		return 1;
	}

	/**
	 * Whether a whole-site purge of the site is already in the outbox (pending or refused), so a
	 * refusal needs no second one.
	 *
	 * @param string $site Site host.
	 * @return bool
	 */
	private function holds_whole_site_purge( $site ) {
		global $wpdb;
		$table = self::table();
		foreach ( $wpdb->get_col( $wpdb->prepare( "SELECT events FROM {$table} WHERE site = %s AND event_count = 1 ORDER BY id DESC LIMIT 20", $site ) ) as $json ) {
			if ( Site_Scope::only_whole_site( (array) json_decode( $json, true ) ) ) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Two halves of a batch: its events, or the keys/URLs of its only event (event ids suffixed
	 * `.1`/`.2`). Null when it cannot be split (one event with one item, or a whole-site event).
	 *
	 * @param array $events Events.
	 * @return array<int,array>|null
	 */
	public static function halve( array $events ) {
		$events = array_values( $events );
		if ( count( $events ) > 1 ) {
			return array_chunk( $events, (int) ceil( count( $events ) / 2 ) );
		}
		if ( 1 !== count( $events ) ) {
			return null;
		}
		$event = $events[0];
		$field = isset( $event['tags'] ) ? 'tags' : ( isset( $event['urls'] ) ? 'urls' : '' );
		if ( '' === $field || count( (array) $event[ $field ] ) < 2 ) {
			return null;
		}
		$out = array();
		foreach ( array_chunk( array_values( (array) $event[ $field ] ), (int) ceil( count( $event[ $field ] ) / 2 ) ) as $n => $items ) {
			$part           = $event;
			$part[ $field ] = $items;
			$id             = (string) ( $event['id'] ?? '' ) . '.' . ( $n + 1 );
			$part['id']     = strlen( $id ) <= 128 ? $id : Event_Builder::event_id();
			$out[]          = array( $part );
		}
		return $out;
	}

	/**
	 * Forget dead letters older than DEAD_KEEP_DAYS.
	 */
	private function prune_dead() {
		global $wpdb;
		$table = self::table();
		$wpdb->query( $wpdb->prepare( "DELETE FROM {$table} WHERE dead_at > 0 AND dead_at < %d", time() - self::DEAD_KEEP_DAYS * DAY_IN_SECONDS ) );
	}

	/**
	 * Put dead letters back in the queue (an administrator fixed the cause and delivers by hand).
	 *
	 * @return int Rows revived.
	 */
	public function retry_dead() {
		global $wpdb;
		$table = self::table();
		return (int) $wpdb->query( $wpdb->prepare( "UPDATE {$table} SET dead_at = 0, solo = 1, attempts = 0, next_attempt_at = %d WHERE dead_at > 0", time() ) );
	}

	/**
	 * Deliver everything now, batches the purger refused included (an administrator asked: the
	 * admin page, `wp varnish-edge outbox flush`, and `make up` once the purger is up).
	 *
	 * @param int $max_batches Most batches sent in this call.
	 * @return array The report of process().
	 */
	public function flush( $max_batches ) {
		$this->retry_dead();
		return $this->process( true, $max_batches );
	}

	/**
	 * Backoff in seconds after the nth failure: 15 s doubling, capped at one hour, with jitter.
	 *
	 * @param int $attempts Failures so far.
	 * @return int
	 */
	public static function backoff( $attempts ) {
		$base = (int) min( 3600, 15 * ( 2 ** min( 12, max( 0, $attempts - 1 ) ) ) );
		return $base + wp_rand( 0, (int) ( $base / 5 ) );
	}

	/**
	 * Release row locks.
	 *
	 * @param int[] $ids Row ids.
	 */
	private function unlock( array $ids ) {
		global $wpdb;
		$table = self::table();
		$in    = implode( ',', array_map( 'intval', $ids ) );
		$wpdb->query( "UPDATE {$table} SET locked_until = 0, lock_token = '' WHERE id IN ({$in})" );
	}

	/**
	 * When the backlog passes the limit, replace every unlocked row with one "all" event.
	 *
	 * @param string $site Site host.
	 * @return bool Whether it collapsed.
	 */
	public function maybe_collapse( $site ) {
		global $wpdb;
		$table = self::table();
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
	public function stats() {
		global $wpdb;
		$table = self::table();
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
	 * Delivery status: last success and last error.
	 *
	 * @return array{last_success:int,last_success_events:int,last_error:string,last_error_at:int}
	 */
	public static function status() {
		$status = get_option( self::STATUS_OPTION, array() );
		return array_merge(
			array(
				'last_success'        => 0,
				'last_success_events' => 0,
				'last_error'          => '',
				'last_error_at'       => 0,
			),
			is_array( $status ) ? $status : array()
		);
	}

	/**
	 * Record a delivery outcome.
	 *
	 * @param bool   $ok     Success.
	 * @param int    $events Events delivered.
	 * @param string $error  Error.
	 */
	private function record_status( $ok, $events, $error ) {
		$status = self::status();
		if ( $ok ) {
			$status['last_success']        = time();
			$status['last_success_events'] = $events;
		} else {
			$status['last_error']    = $error;
			$status['last_error_at'] = time();
		}
		update_option( self::STATUS_OPTION, $status, false );
	}

	/**
	 * Whether any row is due now (cheap check for later requests).
	 *
	 * @return bool
	 */
	public function has_due() {
		$next = (int) get_option( 'varnish_edge_outbox_next', 0 );
		return $next > 0 && $next <= time();
	}

	/**
	 * Remember when the next row is due and make sure WP-Cron will retry it.
	 */
	public function schedule_next() {
		$stats = $this->stats();
		update_option( 'varnish_edge_outbox_next', $stats['rows'] ? max( 1, $stats['next_attempt'] ) : 0, true );
		if ( $stats['rows'] && ! wp_next_scheduled( self::CRON_HOOK ) ) {
			wp_schedule_single_event( max( time() + 5, $stats['next_attempt'] ), self::CRON_HOOK );
		}
	}

	/**
	 * Delete every pending row.
	 *
	 * @return int Rows deleted.
	 */
	public function clear() {
		global $wpdb;
		$n = (int) $wpdb->query( 'DELETE FROM ' . self::table() );
		$this->schedule_next();
		return $n;
	}
}
