<?php
/**
 * Base of the classes that turn one kind of change into invalidations.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * What every change handler shares: the settings (for the key scheme) and the request's queue.
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
	 * @param Event_Queue $queue    Queue.
	 */
	public function __construct( Settings $settings, Event_Queue $queue ) {
		$this->settings = $settings;
		$this->queue    = $queue;
	}

	/**
	 * Key scheme.
	 *
	 * @return Key_Scheme
	 */
	protected function scheme() {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/**
	 * Queue an invalidation.
	 *
	 * @param Invalidation $inv Invalidation.
	 */
	protected function queue( Invalidation $inv ) {
		$this->queue->add( $inv );
	}
}
