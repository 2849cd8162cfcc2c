<?php
/**
 * Delivery of the outbox to the purger.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Sends the outbox's rows as signed webhooks. Failed rows back off exponentially, retried by later
 * requests and WP-Cron; a batch failing MAX_ATTEMPTS times is replaced by a whole-site purge.
 * Permanent refusals are not retried: a batch too large (413) is split in halves, a batch refused
 * as invalid or for an unknown site (400, 403, …) is dead-lettered: kept, visible with its reason,
 * not retried until an administrator delivers the outbox by hand, and replaced by a whole-site purge.
 */
class Outbox_Delivery {

	const STATUS_OPTION = 'varnish_edge_status';
	const CRON_HOOK     = 'varnish_edge_process_outbox';
	const MAX_ATTEMPTS  = 25;

	/**
	 * Answers that no retry of the same request can change.
	 */
	const PERMANENT_CODES = array( 400, 403, 413, 415, 422 );

	/** @var Outbox_Store */
	private $store;

	/** @var Webhook_Client */
	private $client;

	/** @var Settings */
	private $settings;

	/**
	 * Constructor.
	 *
	 * @param Outbox_Store   $store    Rows to deliver.
	 * @param Webhook_Client $client   Sends one webhook.
	 * @param Settings       $settings Whether a purger is configured.
	 */
	public function __construct( Outbox_Store $store, Webhook_Client $client, Settings $settings ) {
		$this->store    = $store;
		$this->client   = $client;
		$this->settings = $settings;
	}

	/**
	 * Hooks: the WP-Cron retry.
	 */
	public function register(): void {
		add_action( self::CRON_HOOK, array( $this, 'on_cron' ) );
	}

	/**
	 * WP-Cron retry of the outbox.
	 */
	public function on_cron(): void {
		if ( $this->settings->is_configured() ) {
			$this->process();
		}
	}

	/**
	 * Deactivation: stop the retry schedule (the outbox table stays until uninstall).
	 */
	public static function unschedule(): void {
		wp_clear_scheduled_hook( self::CRON_HOOK );
	}

	/**
	 * Deliver due rows (or every row when $force). Stops at the first failure.
	 *
	 * @param bool $force       Ignore backoff.
	 * @param int  $max_batches Maximum webhooks to send.
	 * @return array{sent:int,events:int,failed:int,refused:int,error:string} `refused`: batches dead-lettered.
	 */
	public function process( bool $force = false, int $max_batches = 10 ): array {
		$this->store->prune_dead();
		$report = array(
			'sent'    => 0,
			'events'  => 0,
			'failed'  => 0,
			'refused' => 0,
			'error'   => '',
		);
		for ( $i = 0; $i < $max_batches; $i++ ) {
			$rows = $this->store->claim( $force );
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
	 * Deliver everything now, batches the purger refused included (an administrator asked: the
	 * admin page, `wp varnish-edge outbox flush`, and `make up` once the purger is up).
	 *
	 * @param int $max_batches Most batches sent in this call.
	 * @return array{sent:int,events:int,failed:int,refused:int,error:string} The report of process().
	 */
	public function flush( int $max_batches ): array {
		$this->store->retry_dead();
		return $this->process( true, $max_batches );
	}

	/**
	 * Send claimed rows as one webhook; delete on success, split or dead-letter on a permanent
	 * refusal, back off on any other failure.
	 *
	 * @param array<int,object> $rows Claimed rows.
	 * @return array{ok:bool,code:int,error:string,handled?:bool,dead?:int}
	 */
	private function deliver( array $rows ): array {
		$events = array();
		foreach ( $rows as $row ) {
			$events = array_merge( $events, Outbox_Store::events_of( $row ) );
		}
		// A retry of the same rows reuses the same webhook id.
		$message_id = 1 === count( $rows ) ? $rows[0]->message_id : 'msg_' . substr( hash( 'sha256', implode( ',', wp_list_pluck( $rows, 'message_id' ) ) ), 0, 40 );
		$result     = $this->client->send( $message_id, $rows[0]->site, $events );
		if ( $result['ok'] ) {
			$this->store->delete( $rows );
			$this->record_status( true, count( $events ), '' );
			return $result;
		}
		$this->record_status( false, 0, $result['error'] );
		if ( in_array( (int) $result['code'], self::PERMANENT_CODES, true ) ) {
			$result['dead']    = $this->refused( $rows, $events, $result['code'], $result['error'] );
			$result['handled'] = true;
			return $result;
		}
		foreach ( $rows as $row ) {
			$attempts = (int) $row->attempts + 1;
			if ( $attempts < self::MAX_ATTEMPTS ) {
				$this->store->retry_later( $row, $attempts, time() + self::backoff( $attempts ), $result['error'] );
				continue;
			}
			// Undeliverable for hours: replace with a whole-site purge so nothing is lost.
			$purge = Site_Scope::whole_site_event( 'undeliverable batch replaced by a full purge', time() );
			$this->store->replace( $row, array( $purge ), time() + self::backoff( 1 ), $result['error'] );
		}
		return $result;
	}

	/**
	 * A permanent refusal. Several merged rows are first retried one by one, so one bad row cannot
	 * hold the others back. A single row answered 413 is split in halves (new rows, new webhook
	 * ids, the same event ids); any other refusal, or a 413 for one event that cannot be split,
	 * dead-letters the row and queues a whole-site purge in its place.
	 *
	 * @param array<int,object>              $rows   Claimed rows.
	 * @param array<int,array<string,mixed>> $events Their events.
	 * @param int                            $code   The purger's HTTP status.
	 * @param string                         $error  What the client reported.
	 * @return int Rows dead-lettered (0 or 1).
	 */
	private function refused( array $rows, array $events, int $code, string $error ): int {
		if ( count( $rows ) > 1 ) {
			$this->store->isolate( $rows, $error );
			return 0;
		}
		$row    = $rows[0];
		$halves = 413 === $code ? self::halve( $events ) : null;
		if ( null !== $halves ) {
			$this->store->split( $row, $halves );
			return 0;
		}
		$this->store->dead_letter( $row, $error );
		if ( ! Site_Scope::only_whole_site( $events ) && ! $this->store->holds_whole_site_purge( $row->site ) ) {
			$reason = sprintf( 'batch refused by the purger (HTTP %d) replaced by a full purge', $code );
			$this->store->insert( $row->site, array( Site_Scope::whole_site_event( $reason, time() ) ), true );
		}
		return 1;
	}

	/**
	 * Two halves of a batch: its events, or the keys/URLs of its only event (event ids suffixed
	 * `.1`/`.2`). Null when it cannot be split (one event with one item, or a whole-site event).
	 *
	 * @param array<int,array<string,mixed>> $events Protocol events.
	 * @return array<int,array<int,array<string,mixed>>>|null
	 */
	public static function halve( array $events ): ?array {
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
	 * Backoff in seconds after the nth failure: 15 s doubling, capped at one hour, with jitter.
	 *
	 * @param int $attempts Failures so far.
	 */
	public static function backoff( int $attempts ): int {
		$base = (int) min( 3600, 15 * ( 2 ** min( 12, max( 0, $attempts - 1 ) ) ) );
		return $base + wp_rand( 0, (int) ( $base / 5 ) );
	}

	/**
	 * Delivery status: last success and last error.
	 *
	 * @return array{last_success:int,last_success_events:int,last_error:string,last_error_at:int}
	 */
	public static function status(): array {
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
	 * @param int    $events Events delivered.
	 * @param string $error  What failed.
	 */
	private function record_status( bool $ok, int $events, string $error ): void {
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
	 * Note when the next row is due and make sure WP-Cron will retry it.
	 */
	public function schedule_next(): void {
		$next = $this->store->note_next_due();
		if ( $next && ! wp_next_scheduled( self::CRON_HOOK ) ) {
			wp_schedule_single_event( max( time() + 5, $next ), self::CRON_HOOK );
		}
	}
}
