<?php
/**
 * Site Health test.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Reports configuration, outbox backlog, last delivery and last error in Site Health, and whether
 * the site's last change sent to the purger was applied by every edge node (its receipts, read as
 * the block editor's live notice reads them).
 */
class Site_Health {

	/**
	 * How long the purger keeps receipts by default (PURGER_DEDUPE_TTL_S): an older change is
	 * not asked about.
	 */
	const RECEIPTS_KEPT = DAY_IN_SECONDS;

	/**
	 * Seconds a node may take to apply a change before "not applied yet" is worth a warning.
	 */
	const APPLY_GRACE = 120;

	/**
	 * Severity of each Site Health status.
	 */
	const RANK = array(
		'good'        => 0,
		'recommended' => 1,
		'critical'    => 2,
	);

	/** @var Settings */
	private $settings;

	/** @var Outbox_Store */
	private $outbox;

	/** @var Live_Status_Log */
	private $log;

	/** @var Live_Status */
	private $live;

	/**
	 * Constructor.
	 *
	 * @param Settings        $settings Settings.
	 * @param Outbox_Store    $outbox   Pending batches and dead letters.
	 * @param Live_Status_Log $log      The site's last change.
	 * @param Live_Status     $live     Its receipts, as the purger tells them.
	 */
	public function __construct( Settings $settings, Outbox_Store $outbox, Live_Status_Log $log, Live_Status $live ) {
		$this->settings = $settings;
		$this->outbox   = $outbox;
		$this->log      = $log;
		$this->live     = $live;
	}

	/**
	 * Hooks: the test in Site Health.
	 */
	public function register(): void {
		add_filter( 'site_status_tests', array( $this, 'add_test' ) );
	}

	/**
	 * Filter `site_status_tests`.
	 *
	 * @param array<string,array<string,mixed>> $tests Site Health tests by kind.
	 * @return array<string,array<string,mixed>>
	 */
	public function add_test( array $tests ): array {
		$tests['direct']['varnish_edge'] = array(
			'label' => __( 'Varnish Edge purge delivery', 'varnish-edge' ),
			'test'  => array( $this, 'run' ),
		);
		return $tests;
	}

	/**
	 * The test.
	 *
	 * @return array<string,mixed> Site Health result.
	 */
	public function run(): array {
		$stats  = $this->outbox->stats();
		$status = Outbox_Delivery::status();
		$result = array(
			'label'       => __( 'Cache purges reach the purger', 'varnish-edge' ),
			'status'      => 'good',
			'badge'       => array(
				'label' => __( 'Performance', 'varnish-edge' ),
				'color' => 'blue',
			),
			'description' => '',
			'actions'     => sprintf( '<a href="%s">%s</a>', esc_url( admin_url( 'options-general.php?page=varnish-edge' ) ), esc_html__( 'Varnish Edge settings', 'varnish-edge' ) ),
			'test'        => 'varnish_edge',
		);
		$lines   = array();
		$lines[] = sprintf(
			/* translators: 1: pending batches, 2: pending events. */
			__( 'Outbox: %1$d pending batches (%2$d events).', 'varnish-edge' ),
			$stats['rows'],
			$stats['events']
		);
		$lines[] = $status['last_success']
			/* translators: %s: time ago. */
			? sprintf( __( 'Last successful delivery: %s ago.', 'varnish-edge' ), human_time_diff( $status['last_success'] ) )
			: __( 'No successful delivery yet.', 'varnish-edge' );
		if ( '' !== $status['last_error'] ) {
			/* translators: 1: time ago, 2: error message. */
			$lines[] = sprintf( __( 'Last error (%1$s ago): %2$s', 'varnish-edge' ), human_time_diff( $status['last_error_at'] ), $status['last_error'] );
		}
		if ( $stats['dead'] > 0 ) {
			$lines[] = sprintf(
				/* translators: 1: number of batches, 2: time ago, 3: the purger's answer. */
				_n( '%1$d batch was refused by the purger and will not be retried (a full purge was queued in its place); the latest %2$s ago: %3$s', '%1$d batches were refused by the purger and will not be retried (a full purge was queued in their place); the latest %2$s ago: %3$s', $stats['dead'], 'varnish-edge' ),
				$stats['dead'],
				human_time_diff( $stats['dead_at'] ),
				$stats['dead_reason']
			);
			$lines[] = __( 'Fix the cause, then use "Deliver outbox now" on the settings page (or wp varnish-edge outbox flush) to send them again.', 'varnish-edge' );
		}
		if ( ! $this->settings->is_configured() ) {
			$result['status'] = 'recommended';
			$result['label']  = __( 'Varnish Edge is not connected to a purger', 'varnish-edge' );
			array_unshift( $lines, __( 'Without a purger URL and secret, pages stay on the 1 second microcache.', 'varnish-edge' ) );
		} else {
			if ( $stats['dead'] > 0 ) {
				$result['status'] = 'critical';
				$result['label']  = __( 'The purger refused some cache purges', 'varnish-edge' );
			} elseif ( $stats['rows'] > 0 && $stats['oldest'] < time() - 300 ) {
				$result['status'] = 'critical';
				$result['label']  = __( 'Cache purges are not being delivered', 'varnish-edge' );
			} elseif ( $stats['rows'] > 0 ) {
				$result['status'] = 'recommended';
				$result['label']  = __( 'Cache purges are waiting to be delivered', 'varnish-edge' );
			}
			$edge = $this->last_change_report( $stats['rows'] );
			array_unshift( $lines, ...$edge['lines'] );
			if ( self::RANK[ $edge['status'] ] > self::RANK[ $result['status'] ] ) {
				$result['status'] = $edge['status'];
				$result['label']  = $edge['label'];
			}
		}
		$result['description'] = '<p>' . implode( '</p><p>', array_map( 'esc_html', $lines ) ) . '</p>';
		return $result;
	}

	/**
	 * Whether the site's last change reached every edge node: "The last change (post 12,
	 * 2026-05-25 10:00:03) was applied by all 3 edge nodes in 184 ms.", or which node did not
	 * apply it and why, or "No change has been sent to the edge yet.".
	 *
	 * @param int $pending Batches waiting in the outbox.
	 * @return array{status:string,label:string,lines:string[]} Lines in plain text.
	 */
	public function last_change_report( int $pending ): array {
		$report = array(
			'status' => 'good',
			'label'  => '',
			'lines'  => array(),
		);
		$last   = $this->log->last_change();
		if ( null === $last ) {
			$report['lines'][] = __( 'No change has been sent to the edge yet.', 'varnish-edge' );
			return $report;
		}
		$what = self::describe( $last );
		$when = wp_date( 'Y-m-d H:i:s', intdiv( $last['at'], 1000 ) );
		$age  = time() - intdiv( $last['at'], 1000 );
		if ( $age > self::RECEIPTS_KEPT ) {
			/* translators: 1: what changed (post 12), 2: date and time. */
			$report['lines'][] = sprintf( __( 'The last change (%1$s, %2$s) is older than the purger keeps receipts (a day): whether every edge node applied it can no longer be told.', 'varnish-edge' ), $what, $when );
			return $report;
		}
		$read = $this->live->receipts( $last['ids'] );
		if ( ! $read['ok'] ) {
			/* translators: 1: what changed (post 12), 2: date and time, 3: why the receipts could not be read. */
			$report['lines'][] = sprintf( __( 'Whether the last change (%1$s, %2$s) reached every edge node is not known: %3$s', 'varnish-edge' ), $what, $when, $read['error'] );
			return $report;
		}
		if ( ! empty( $read['body']['missing'] ) ) {
			$report['lines'][] = $pending > 0
				/* translators: 1: what changed (post 12), 2: date and time. */
				? sprintf( __( 'The last change (%1$s, %2$s) has not reached the purger yet: it waits in the outbox.', 'varnish-edge' ), $what, $when )
				/* translators: 1: what changed (post 12), 2: date and time. */
				: sprintf( __( 'The purger has no receipt of the last change (%1$s, %2$s): it was accepted, but the purger no longer knows it (its receipts expired or its store was emptied).', 'varnish-edge' ), $what, $when );
			return $report;
		}
		$status = $this->live->from_receipts( $read['body'], $last['at'] );
		if ( 0 === $status['total'] ) {
			$report['status'] = 'critical';
			$report['label']  = __( 'The purger has no edge node to purge', 'varnish-edge' );
			/* translators: 1: what changed (post 12), 2: date and time. */
			$report['lines'][] = sprintf( __( 'The purger knows no edge node: the last change (%1$s, %2$s) was applied nowhere. Check VARNISH_NODES on the purger.', 'varnish-edge' ), $what, $when );
			return $report;
		}
		if ( 'live' === $status['state'] ) {
			$report['lines'][] = sprintf(
				/* translators: 1: what changed (post 12), 2: date and time, 3: number of edge nodes, 4: milliseconds from the change. */
				_n( 'The last change (%1$s, %2$s) was applied by its only edge node in %4$d ms.', 'The last change (%1$s, %2$s) was applied by all %3$d edge nodes in %4$d ms.', $status['total'], 'varnish-edge' ),
				$what,
				$when,
				$status['total'],
				(int) $status['ms']
			);
			return $report;
		}
		$report['lines'][] = sprintf(
			/* translators: 1: what changed (post 12), 2: date and time, 3: nodes that applied it, 4: all nodes. */
			_n( 'The last change (%1$s, %2$s) was applied by %3$d of %4$d edge node.', 'The last change (%1$s, %2$s) was applied by %3$d of %4$d edge nodes.', $status['total'], 'varnish-edge' ),
			$what,
			$when,
			$status['live'],
			$status['total']
		);
		foreach ( Live_Status::not_applied( $status['nodes'] ) as $node ) {
			if ( 'failed' === $node['state'] ) {
				$report['status'] = 'critical';
				/* translators: 1: node name, 2: the node's error. */
				$report['lines'][] = sprintf( __( 'Edge node %1$s did not apply it: it failed (%2$s).', 'varnish-edge' ), $node['node'], $node['error'] );
			} elseif ( 'down' === $node['state'] ) {
				$report['status']  = 'critical' === $report['status'] ? 'critical' : 'recommended';
				$report['lines'][] = $node['retrying']
					/* translators: 1: node name, 2: the node's error. */
					? sprintf( __( 'Edge node %1$s did not apply it: down (%2$s), retrying.', 'varnish-edge' ), $node['node'], $node['error'] )
					/* translators: 1: node name, 2: the node's error. */
					: sprintf( __( 'Edge node %1$s did not apply it: down (%2$s).', 'varnish-edge' ), $node['node'], $node['error'] );
			} else {
				if ( $age > self::APPLY_GRACE && 'good' === $report['status'] ) {
					$report['status'] = 'recommended';
				}
				/* translators: %s: node name. */
				$report['lines'][] = sprintf( __( 'Edge node %s has not applied it yet.', 'varnish-edge' ), $node['node'] );
			}
		}
		$report['label'] = 'critical' === $report['status']
			? __( 'An edge node did not apply the last change', 'varnish-edge' )
			: __( 'The last change is not applied on every edge node yet', 'varnish-edge' );
		return $report;
	}

	/**
	 * What the last change was: "post 12", "posts 12, 14, and 15", "40 posts, among them 1, 2,
	 * 3, 4, and 5", or the events' reason when no post was saved ("manual purge of the whole site
	 * by admin", "option blogname changed").
	 *
	 * @param array{posts:int[],count:int,what:string} $last The last change.
	 */
	private static function describe( array $last ): string {
		$posts = $last['posts'];
		if ( ! $posts ) {
			return '' !== $last['what'] ? $last['what'] : __( 'a purge', 'varnish-edge' );
		}
		if ( 1 === $last['count'] ) {
			/* translators: %d: post ID. */
			return sprintf( __( 'post %d', 'varnish-edge' ), $posts[0] );
		}
		if ( count( $posts ) >= $last['count'] ) {
			/* translators: %s: list of post IDs. */
			return sprintf( __( 'posts %s', 'varnish-edge' ), wp_sprintf( '%l', $posts ) );
		}
		/* translators: 1: number of posts, 2: list of some of their IDs. */
		return sprintf( __( '%1$d posts, among them %2$s', 'varnish-edge' ), $last['count'], wp_sprintf( '%l', $posts ) );
	}
}
