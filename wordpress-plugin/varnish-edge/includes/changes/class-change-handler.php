<?php
/**
 * Base of the classes that turn one kind of change into invalidations.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * What every change handler shares: the settings (for the key scheme) and the request's queue,
 * which it pushes its invalidations to. Each handler hooks itself into WordPress (`register()`).
 */
abstract class Change_Handler {

	/** @var Settings */
	protected $settings;

	/** @var Event_Queue */
	protected $queue;

	/**
	 * Constructor.
	 *
	 * @param Settings    $settings Settings.
	 * @param Event_Queue $queue    The request's queue.
	 */
	public function __construct( Settings $settings, Event_Queue $queue ) {
		$this->settings = $settings;
		$this->queue    = $queue;
	}

	/**
	 * Hook the handler into the WordPress actions and filters it listens to.
	 */
	abstract public function register(): void;

	/**
	 * Key scheme of the current site.
	 */
	protected function scheme(): Key_Scheme {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/**
	 * Queue an invalidation for the end of the request.
	 */
	protected function queue( Invalidation $inv ): void {
		$this->queue->add( $inv );
	}
}
