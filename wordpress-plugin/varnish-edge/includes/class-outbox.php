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
 */
class Outbox {

	const DB_VERSION      = '1';
	const DB_OPTION       = 'varnish_edge_db_version';
	const STATUS_OPTION   = 'varnish_edge_status';
	const MAX_ROWS        = 200;
	const MAX_EVENTS      = 5000;
	const MAX_ATTEMPTS    = 25;
	const LOCK_SECONDS    = 60;
	const EVENTS_PER_SEND = 500;
	const CRON_HOOK       = 'varnish_edge_process_outbox';

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
		global $wpdb;
		if ( array() === $events ) {
			return 0;
		}
		$wpdb->insert(
			self::table(),
			array(
				'message_id'      => 'msg_' . bin2hex( random_bytes( 12 ) ),
				'site'            => $site,
				'events'          => wp_json_encode( array_values( $events ), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ),
				'event_count'     => count( $events ),
				'next_attempt_at' => time(),
				'created_at'      => time(),
				'last_error'      => '',
			),
			array( '%s', '%s', '%s', '%d', '%d', '%d', '%s' )
		);
		$id = (int) $wpdb->insert_id;
		$this->maybe_collapse( $site );
		return $id;
	}

	/**
	 * Deliver due rows (or every row when $force). Stops at the first failure.
	 *
	 * @param bool $force       Ignore backoff.
	 * @param int  $max_batches Maximum webhooks to send.
	 * @return array{sent:int,events:int,failed:int,error:string}
	 */
	public function process( $force = false, $max_batches = 10 ) {
		$report = array(
			'sent'   => 0,
			'events' => 0,
			'failed' => 0,
			'error'  => '',
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
		// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET lock_token = %s, locked_until = %d WHERE locked_until < %d AND next_attempt_at <= %d ORDER BY id LIMIT 50", $token, $now + self::LOCK_SECONDS, $now, $due ) );
		// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$rows = $wpdb->get_results( $wpdb->prepare( "SELECT * FROM {$table} WHERE lock_token = %s ORDER BY id", $token ) );
		if ( ! $rows ) {
			return array();
		}
		$keep    = array();
		$release = array();
		$events  = 0;
		$site    = $rows[0]->site;
		foreach ( $rows as $row ) {
			if ( $row->site === $site && ( array() === $keep || $events + (int) $row->event_count <= self::EVENTS_PER_SEND ) ) {
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
	 * Send claimed rows as one webhook; delete on success, back off on failure.
	 *
	 * @param array<int,object> $rows Rows.
	 * @return array{ok:bool,code:int,error:string,accepted:int}
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
			$wpdb->query( "DELETE FROM {$table} WHERE id IN ({$in})" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
			$this->record_status( true, count( $events ), '' );
			return $result;
		}
		foreach ( $rows as $row ) {
			$attempts = (int) $row->attempts + 1;
			if ( $attempts >= self::MAX_ATTEMPTS ) {
				// Dead letter: replace with a whole-site purge so nothing is lost.
				$wpdb->update( $table, array( 'events' => wp_json_encode( array( Event_Builder::all_event( 'undeliverable batch replaced by a full purge', time() ) ) ), 'event_count' => 1, 'attempts' => 0 ), array( 'id' => (int) $row->id ) );
				$attempts = 1;
			}
			$wpdb->update(
				$table,
				array(
					'attempts'        => $attempts,
					'next_attempt_at' => time() + self::backoff( $attempts ),
					'locked_until'    => 0,
					'lock_token'      => '',
					'last_error'      => $result['error'],
				),
				array( 'id' => (int) $row->id ),
				array( '%d', '%d', '%d', '%s', '%s' ),
				array( '%d' )
			);
		}
		$this->record_status( false, 0, $result['error'] );
		return $result;
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
		$wpdb->query( "UPDATE {$table} SET locked_until = 0, lock_token = '' WHERE id IN ({$in})" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
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
		$stats = $wpdb->get_row( "SELECT COUNT(*) AS n, COALESCE(SUM(event_count),0) AS e FROM {$table}" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		if ( ! $stats || ( (int) $stats->n <= self::MAX_ROWS && (int) $stats->e <= self::MAX_EVENTS ) ) {
			return false;
		}
		$now   = time();
		$token = 'collapse-' . bin2hex( random_bytes( 8 ) );
		// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET lock_token = %s, locked_until = %d WHERE locked_until < %d AND site = %s", $token, $now + self::LOCK_SECONDS, $now, $site ) );
		$wpdb->insert(
			$table,
			array(
				'message_id'      => 'msg_' . bin2hex( random_bytes( 12 ) ),
				'site'            => $site,
				'events'          => wp_json_encode( array( Event_Builder::all_event( sprintf( 'outbox collapsed: %d pending batches', (int) $stats->n ), $now ) ) ),
				'event_count'     => 1,
				'next_attempt_at' => $now,
				'created_at'      => $now,
				'last_error'      => '',
			)
		);
		$wpdb->query( $wpdb->prepare( "DELETE FROM {$table} WHERE lock_token = %s", $token ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		return true;
	}

	/**
	 * Outbox statistics.
	 *
	 * @return array{rows:int,events:int,oldest:int,next_attempt:int,last_error:string}
	 */
	public function stats() {
		global $wpdb;
		$table = self::table();
		$row   = $wpdb->get_row( "SELECT COUNT(*) AS n, COALESCE(SUM(event_count),0) AS e, COALESCE(MIN(created_at),0) AS oldest, COALESCE(MIN(next_attempt_at),0) AS next_at FROM {$table}" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$error = (string) $wpdb->get_var( "SELECT last_error FROM {$table} WHERE last_error <> '' ORDER BY id DESC LIMIT 1" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		return array(
			'rows'         => (int) ( $row->n ?? 0 ),
			'events'       => (int) ( $row->e ?? 0 ),
			'oldest'       => (int) ( $row->oldest ?? 0 ),
			'next_attempt' => (int) ( $row->next_at ?? 0 ),
			'last_error'   => $error,
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
		$n = (int) $wpdb->query( 'DELETE FROM ' . self::table() ); // phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared
		$this->schedule_next();
		return $n;
	}
}
